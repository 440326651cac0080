#!/usr/bin/env python3
"""Screenshot the ``orchestrate serve`` dashboard at 1400 px and 400 px widths.

Usage (after ``orchestrate --config configs/example.yaml`` wrote runs/example/):
    python docs/make_dashboard_screenshots.py --runs runs/ [--out docs/img/]

Serves the runs on a free loopback port (in this process), loads the evals, eval, compare
(regressed cases only), case and trends pages in headless Chromium (stdlib DevTools pipe,
``eval_harness.reports.chromium``), and writes ``dashboard-<page>-<width>.png``. Fails when
a page logs a console error or requests anything outside the server.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES = [("evals", "/"), ("eval", "/e/{eval}"),
         ("compare", "/e/{eval}/compare?a={a}&b={b}&category=regressed"),
         ("case", "/e/{eval}/case/{case}"), ("trends", "/e/{eval}/trends")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="runs root (holding runs/<eval>/)")
    ap.add_argument("--eval", default="example", help="eval to show (default example)")
    ap.add_argument("--case", default="geo-03", help="case page to show (default geo-03)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"), help="folder for the PNGs")
    ap.add_argument("--height", type=int, default=1500, help="CSS pixels kept from the top")
    args = ap.parse_args()
    from eval_harness.reports.chromium import Chromium
    from eval_harness.serve.live import background_server

    out = Path(args.out)
    with background_server([Path(args.runs)], wait_s=600) as (base, app), Chromium() as b:
        entry = app.dash.catalog.entries()[args.eval]
        data = app.dash.cache.lookup(entry, wait_s=600).data
        cids = data.condition_ids
        fill = {"eval": args.eval, "a": cids[-1], "b": cids[0], "case": args.case}
        for name, path in PAGES:
            for width in (1400, 400):
                b.goto(base + path.format(**fill), width=width, height=900)
                time.sleep(2.0 if name == "eval" else 0.3)  # the charts are separate images
                bad = b.log.console + b.log.exceptions + [
                    u for u in b.log.requests if not u.startswith(base + "/")]
                if bad:
                    print(f"{name} {width}: {bad}", file=sys.stderr)
                    return 1
                png = b.screenshot(out / f"dashboard-{name}-{width}.png", width=width,
                                   max_height=args.height)
                print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
