"""Write report files: ``report.md``, ``report.json``, ``report.html``.

``report.json`` is the report model (docs/reports.md) with floats rounded to 10
significant digits (stable across platforms) and NaN/inf written as ``null``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from eval_harness.errors import UsageError
from eval_harness.redact import redact
from eval_harness.reports.markdown import render_markdown
from eval_harness.reports.model import build_report
from eval_harness.timing import phase

FORMATS = ("md", "json", "html")
FILENAMES = {"md": "report.md", "json": "report.json", "html": "report.html"}


def _clean(x: Any) -> Any:
    if isinstance(x, bool) or x is None or isinstance(x, (str, int)):
        return x
    if hasattr(x, "item") and not isinstance(x, (list, dict)):
        return _clean(x.item())
    if isinstance(x, float):
        return float(f"{x:.10g}") if math.isfinite(x) else None
    if isinstance(x, Mapping):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return str(x)


def report_json(report: Mapping[str, Any]) -> str:
    """The stable JSON text of a report model."""
    return json.dumps(_clean(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def now_iso() -> str:
    """UTC time, or ``SOURCE_DATE_EPOCH`` when set (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch
         else _dt.datetime.now(_dt.timezone.utc))
    return t.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_formats(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"md,json"`` → ("md", "json"); UsageError on an unknown name."""
    items = text.split(",") if isinstance(text, str) else list(text)
    out = tuple(dict.fromkeys(i.strip().lower() for i in items if i.strip()))
    bad = [f for f in out if f not in FORMATS]
    if bad or not out:
        raise UsageError(f"unknown report format(s) {bad or text!r}", hint="use md,json,html")
    return out


def write_reports(
    out_dir: Path,
    *,
    anova: Mapping[str, Any],
    frame: pd.DataFrame,
    comparisons: Mapping[str, Any] | None = None,
    leaderboard: Mapping[str, Any] | None = None,
    thresholds: list[dict[str, Any]] | None = None,
    pairwise: Mapping[str, Any] | None = None,
    runs_root: Path | Sequence[Path] | None = None,
    formats: Sequence[str] = FORMATS,
    generated_at: str | None = None,
    report: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """Write the requested reports into ``out_dir``; return {format: path}.

    ``runs_root`` (the runs directory) feeds the HTML per-case drill-down; without it the
    drill-down says "not available". ``generated_at`` defaults to now (UTC). ``report``: the
    report model when the caller already built it (``build_report``), so it is built once.
    """
    fmts = parse_formats(formats)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if report is None:
        report = build_report(anova=anova, frame=frame, comparisons=comparisons,
                              leaderboard=leaderboard, thresholds=thresholds,
                              pairwise=pairwise, generated_at=generated_at or now_iso())
    written: dict[str, Path] = {}
    for f in fmts:
        with phase(FILENAMES[f]):  # --timings: one phase per report file
            written[f] = _write_one(out_dir / FILENAMES[f], f, report, frame, runs_root)
    return written


def _write_one(path: Path, fmt: str, report: Mapping[str, Any], frame: pd.DataFrame,
               runs_root: Path | Sequence[Path] | None) -> Path:
    """Render one report format and write it atomically (secrets masked)."""
    if fmt == "md":
        text = render_markdown(report)
    elif fmt == "json":
        text = report_json(report)
    else:
        from eval_harness.reports.html import render_html  # matplotlib only when needed

        text = render_html(report, frame=frame, runs_root=runs_root)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(redact(text), encoding="utf-8")  # secrets masked (redact.py)
    tmp.replace(path)
    return path
