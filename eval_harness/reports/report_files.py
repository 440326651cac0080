"""Write report files: ``report.md``, ``report.json``, ``report.html``.

``report.json`` is the report model (docs/reports.md) with floats rounded to 10
significant digits (stable across platforms) and NaN/inf written as ``null``. It is
indented when small and compact when large (``jsonfile.json_text``). A case grid of more
than :data:`GRID_INLINE_CELLS` cells keeps only its first cases inline; every case is then
in ``report.cases.jsonl`` beside it (one ``case_grid.cases`` entry per line), which
:func:`read_report` puts back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from eval_harness._util.atomic_files import atomic_text_writer
from eval_harness._util.clock import utc_now_iso
from eval_harness._util.json_text import json_text, write_text_atomic
from eval_harness._util.numbers import as_finite
from eval_harness._util.phase_timings import phase
from eval_harness._util.redact import redact
from eval_harness.errors import UsageError
from eval_harness.reports.documents import AnalysisDocuments
from eval_harness.reports.markdown import render_markdown
from eval_harness.reports.report_model import build_report

FORMATS = ("md", "json", "html")
FILENAMES = {"md": "report.md", "json": "report.json", "html": "report.html"}
CASES_FILE = "report.cases.jsonl"
#: case × condition cells report.json holds inline (e.g. 625 cases × 16 conditions);
#: a larger grid keeps its first ``GRID_INLINE_CELLS // conditions`` cases inline
GRID_INLINE_CELLS = 10_000
_CHUNK = 2_000  # JSON Lines rows per redaction call


def _round(x: float) -> float | None:
    f = as_finite(x)
    return None if f is None else float(f"{f:.10g}")


_PLAIN = frozenset({str, int, bool, type(None)})  # written as they are


def _clean(x: Any) -> Any:
    # exact types first, plain leaves without a call: the case grid alone is ~6 values
    # per case × condition
    t = type(x)
    if t in _PLAIN:
        return x
    if t is float:
        return _round(x)
    if t is dict:
        return {k if type(k) is str else str(k): v if type(v) in _PLAIN else _clean(v)
                for k, v in x.items()}
    if t is list or t is tuple:
        return [v if type(v) in _PLAIN else _clean(v) for v in x]
    if isinstance(x, (bool, str, int)):
        return x
    if hasattr(x, "item") and not isinstance(x, (list, dict)):
        return _clean(x.item())
    if isinstance(x, float):
        return _round(x)
    if isinstance(x, Mapping):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return str(x)


def split_grid(report: Mapping[str, Any], inline_cells: int | None = None
               ) -> tuple[dict[str, Any], list[Any] | None]:
    """(report.json document, every case_grid case) when the grid has more than
    ``inline_cells`` cells, else (the report unchanged, None). The document keeps the
    first ``max(1, inline_cells // conditions)`` cases (the grid's order: differing first,
    hardest first) and adds ``case_grid.cases_file`` and ``case_grid.n_cases_inline``."""
    inline_cells = GRID_INLINE_CELLS if inline_cells is None else inline_cells
    grid = report.get("case_grid")
    if not isinstance(grid, Mapping):
        return dict(report), None
    cases = list(grid.get("cases") or [])
    n_cond = max(len(grid.get("condition_ids") or []), 1)
    if len(cases) * n_cond <= inline_cells:
        return dict(report), None
    keep = max(1, inline_cells // n_cond)
    doc = dict(report)
    doc["case_grid"] = {**grid, "cases": cases[:keep], "n_cases_inline": keep,
                        "cases_file": CASES_FILE}
    return doc, cases


def report_json(report: Mapping[str, Any]) -> str:
    """The stable JSON text of a report model (indented unless large)."""
    return json_text(_clean(report), ensure_ascii=False, default=None)


def _write_cases(path: Path, cases: list[Any] | None) -> None:
    """``report.cases.jsonl`` (compact, one case per line), or remove a stale one."""
    if cases is None:
        path.unlink(missing_ok=True)  # a grid now inline: no stale rows from an older run
        return
    dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False,
                             separators=(",", ":")).encode
    memo: dict[int, tuple[Any, Any]] = {}
    with atomic_text_writer(path) as fh:
        for start in range(0, len(cases), _CHUNK):
            fh.write(redact("".join(dumps(_clean_case(c, memo)) + "\n"
                                    for c in cases[start:start + _CHUNK])))


def _clean_case(row: Any, memo: dict[int, tuple[Any, Any]]) -> Any:
    """``_clean`` of one case_grid entry; a cell dict shared by many cases (summaries
    .case_grid shares equal cells) is cleaned once (``memo``: id → (cell, cleaned))."""
    if type(row) is not dict or type(row.get("cells")) is not dict:
        return _clean(row)
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key != "cells":
            out[key if type(key) is str else str(key)] = _clean(value)
            continue
        cells = {}
        for cid, cell in value.items():
            hit = memo.get(id(cell))
            if hit is None or hit[0] is not cell:
                hit = memo[id(cell)] = (cell, _clean(cell))  # the cell kept alive: id stays
            cells[cid if type(cid) is str else str(cid)] = hit[1]
        out["cells"] = cells
    return out


def read_report(out_dir: str | Path) -> dict[str, Any]:
    """``report.json`` of ``out_dir`` with every case of the grid under
    ``case_grid.cases`` (read back from ``report.cases.jsonl`` when it was split)."""
    out = Path(out_dir)
    doc = dict(json.loads((out / FILENAMES["json"]).read_text(encoding="utf-8")))
    grid = doc.get("case_grid")
    if isinstance(grid, dict) and grid.get("cases_file"):
        grid = {k: v for k, v in grid.items() if k not in ("cases_file", "n_cases_inline")}
        with open(out / Path(str(doc["case_grid"]["cases_file"])).name, encoding="utf-8") as fh:
            grid["cases"] = [json.loads(line) for line in fh if line.strip()]
        doc["case_grid"] = grid
    return doc


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
    docs: AnalysisDocuments,
    frame: pd.DataFrame,
    *,
    runs_root: Path | Sequence[Path] | None = None,
    formats: Sequence[str] = FORMATS,
    generated_at: str | None = None,
) -> dict[str, Path]:
    """Write the requested reports of ``docs`` into ``out_dir``; return {format: path}.

    ``runs_root`` (the runs directory) feeds the HTML per-case drill-down; without it the
    drill-down says "not available". The report model is ``docs.report`` when the caller
    already built it (``build_report``), so it is built once; else it is built here, with
    ``generated_at`` (default: now, UTC).
    """
    fmts = parse_formats(formats)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = docs.report if docs.report is not None else build_report(
        docs, frame, generated_at=generated_at or utc_now_iso())
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
        doc, every_case = split_grid(report)
        _write_cases(path.parent / CASES_FILE, every_case)
        text = report_json(doc)
    else:
        from eval_harness.reports.html import render_html  # matplotlib only when needed

        text = render_html(report, frame=frame, runs_root=runs_root)
    write_text_atomic(path, redact(text))  # secrets masked (redact.py)
    return path
