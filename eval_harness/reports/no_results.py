"""Reports for a run that produced no scored sample: they say so, with the reasons, instead
of tables of nothing ("4 conditions × 0 cases", every condition "leader", p 1.000).

Writes ``anova.json`` (``status: no_scored_samples``, no terms), ``report.md``,
``report.json`` and ``report.html``, and removes analysis files left by an earlier run in
the same output directory, which would otherwise read as this run's result.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval_harness._util.json_text import write_text_atomic

STALE = ("comparisons.json", "comparisons.cases.jsonl", "leaderboard.json", "thresholds.json")


def no_results_document(name: str, headline: str, n_errored: int, reasons: Mapping[str, int],
                        dead_judges: Mapping[str, tuple[int, Mapping[str, int]]]) -> dict[str, Any]:
    """The JSON both ``anova.json`` and ``report.json`` carry."""
    return {
        "schema_version": 1, "status": "no_scored_samples", "eval": name,
        "message": headline, "terms": {}, "excluded_terms": [],
        "errored_samples": {"count": n_errored},
        "errored_reasons": [{"reason": r, "count": n} for r, n in reasons.items()],
        "errored_judges": [
            {"judge": j, "samples": n, "reasons": [{"reason": r, "count": c} for r, c in rs.items()]}
            for j, (n, rs) in dead_judges.items()],
    }


def _markdown(doc: Mapping[str, Any]) -> str:
    lines = [f"# {doc['eval']}", "", f"**No scored samples.** {doc['message']}", ""]
    if doc["errored_reasons"]:
        lines += ["| errored runs | reason |", "|---:|---|"]
        lines += [f"| {r['count']} | {html.escape(r['reason'], quote=False).replace('|', '&#124;')} |"
                  for r in doc["errored_reasons"]]
        lines.append("")
    for j in doc["errored_judges"]:
        reasons = "; ".join(f"{html.escape(r['reason'], quote=False)} ×{r['count']}" for r in j["reasons"])
        lines.append(f"- judge `{html.escape(j['judge'])}` errored on every sample "
                     f"({j['samples']}): {reasons}")
    return "\n".join(lines) + "\n"


def _html(doc: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><td>{r['count']}</td><td>{html.escape(r['reason'])}</td></tr>"
                   for r in doc["errored_reasons"])
    judges = "".join(
        f"<li>judge <code>{html.escape(j['judge'])}</code> errored on every sample "
        f"({j['samples']}): "
        + html.escape("; ".join(f"{r['reason']} ×{r['count']}" for r in j["reasons"])) + "</li>"
        for j in doc["errored_judges"])
    title = html.escape(str(doc["eval"]))
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>" + title
            + "</title></head><body><h1>" + title + "</h1><p><strong>No scored samples.</strong> "
            + html.escape(doc["message"]) + "</p>"
            + (f"<table><tr><th>errored runs</th><th>reason</th></tr>{rows}</table>" if rows else "")
            + (f"<ul>{judges}</ul>" if judges else "") + "</body></html>\n")


def write_no_results(out_dir: Path, doc: Mapping[str, Any],
                     anova: Mapping[str, Any] | None = None) -> list[Path]:
    """Write the four files; remove stale comparison/leaderboard/threshold files.

    ``anova``: the (empty) ANOVA document of the frame, so ``anova.json`` stays valid
    against its schema; ``doc``'s status, message and reasons are added to it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in STALE:
        (out_dir / stale).unlink(missing_ok=True)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    extra = {k: doc[k] for k in ("status", "message", "errored_reasons", "errored_judges")}
    anova_text = text if anova is None else json.dumps(
        {**anova, **extra}, indent=2, ensure_ascii=False, default=str) + "\n"
    files = {"anova.json": anova_text, "report.json": text, "report.md": _markdown(doc),
             "report.html": _html(doc)}
    written = []
    for fname, body in files.items():
        path = out_dir / fname
        write_text_atomic(path, body)
        written.append(path)
    return written
