#!/usr/bin/env python3
"""Render a report and screenshot it with headless Chromium (stdlib DevTools pipe).

Usage:
    # from an existing analysis directory (anova.json [+ comparisons.json]) and its runs:
    python docs/make_screenshot.py --output analysis/<eval>/ --runs runs/ [--png docs/img/report.png]
    # from the bundled test fixture (no runs needed):
    python docs/make_screenshot.py --fixture [--png docs/img/report.png]

Writes report.html into --output (or a temp dir for --fixture) and a PNG of the page's top
part (charts and the main tables) at --png. Needs chromium (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _fixture_html(out: Path) -> Path:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "reports"))
    import report_fixture  # type: ignore[import-not-found]

    from eval_harness.reports import AnalysisDocuments, write_reports

    fx = ROOT / "tests" / "fixtures" / "reports"
    runs = report_fixture.write_runs(out / "runs")
    docs = AnalysisDocuments(anova=json.loads((fx / "anova.json").read_text()),
                             comparisons=json.loads((fx / "comparisons.json").read_text()),
                             leaderboard=json.loads((fx / "leaderboard.json").read_text()))
    written = write_reports(out, docs, report_fixture.build_frame(), runs_root=runs,
                            formats=("html",), generated_at="2026-01-01T00:00:00Z")
    return written["html"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--output", help="analysis directory with anova.json")
    p.add_argument("--runs", nargs="+", default=["runs"], help="run directories root(s)")
    p.add_argument("--fixture", action="store_true", help="use the bundled test fixture")
    p.add_argument("--png", default=str(ROOT / "docs" / "img" / "report.png"))
    p.add_argument("--height", type=int, default=3000, help="CSS pixels captured from the top")
    p.add_argument("--dark", action="store_true", help="dark colour scheme")
    args = p.parse_args()
    from eval_harness.reports.chromium import Chromium

    with tempfile.TemporaryDirectory() as tmp:
        if args.fixture:
            html = _fixture_html(Path(tmp))
        else:
            if not args.output:
                p.error("--output DIR or --fixture is required")
            from eval_harness.cli.report_cmd import main as report_main

            code = report_main(["--output", args.output, "--runs", *args.runs, "--format", "html",
                                "--quiet"])
            if code:
                return code
            html = Path(args.output) / "report.html"
        with Chromium() as browser:
            browser.open(html, dark=args.dark)
            png = browser.screenshot(Path(args.png), max_height=args.height)
            problems = browser.log.console + browser.log.exceptions + browser.log.network
    print(f"wrote {png}" + (f" (page problems: {problems})" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
