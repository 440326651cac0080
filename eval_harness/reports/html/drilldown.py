"""Per-case drill-down: input, answers and judge rationales read from the run directories.

For each case (differing cases first, as in the grid; at most ``MAX_CASES``) a ``<details>``
block shows the resolved input once, then per condition and replication (at most
``MAX_REPS``) the answer (``outputs.json`` → ``output``), the trace when one was stored
(``trace.json``, nested collapsible steps), the run status and every judge's
value and rationale (``record.json`` → ``scores``; for runs of another registered run
format, its ``read_cases``: :mod:`eval_harness.analysis.loading.formats`), with the case's
latency, cost and tokens. Long texts
are truncated; everything
is escaped. Run directories are looked up as ``<runs_root>/<run_id>`` or
``<runs_root>/<eval>/<run_id>``.

Run ids, eval names and case ids come from run data and are untrusted: each is used only
when it is one plain folder name, and every file is read only when it resolves inside
the runs root and is not itself a symlink (``store.confine``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.loading.formats import NATIVE, RunFormat, classify_dir, get_format
from eval_harness.analysis.loading.run_views import CaseView
from eval_harness.judges.values import MAX_ABS_VALUE
from eval_harness.reports import fmt
from eval_harness.reports.fmt import cell_text
from eval_harness.reports.html.sections import esc
from eval_harness.reports.html.trace_view import trace_html
from eval_harness.store.confine import inside, open_run_file, safe_component

MAX_CASES = 100
MAX_REPS = 3
MAX_INPUT = 2000
MAX_ANSWER = 1500
MAX_RATIONALE = 600
MAX_FILE_BYTES = 5_000_000


def _read_json(path: Path) -> Any:
    """Parsed JSON, or None when missing, a symlink, too large or unreadable (never
    raises)."""
    try:
        with open_run_file(path) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return None
        return json.loads(data.decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested thousands deep
        return None


def _run_dirs(frame: pd.DataFrame, roots: list[Path]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    cols = [c for c in ("eval", "run_id") if c in frame.columns]
    if "run_id" not in cols:
        return out
    evals = frame["eval"].unique() if "eval" in cols else [""]
    if len(evals) == 1:  # the usual case: unique run ids alone (cheaper than row pairs)
        pairs = [(evals[0], r) for r in frame["run_id"].unique()]
    else:
        pairs = list(frame[["eval", "run_id"]].drop_duplicates().itertuples(index=False,
                                                                          name=None))
    for ev_raw, rid_raw in pairs:
        rid = str(rid_raw)
        ev = str(ev_raw)
        if not safe_component(rid):
            continue
        tries = [(root, root / rid) for root in roots]
        if safe_component(ev):
            tries += [(root, root / ev / rid) for root in roots]
        for root, cand in tries:
            if cand.is_dir() and inside(root, cand):
                out[rid] = cand
                break
    return out


def _pre(text: Any, limit: int) -> str:
    if not isinstance(text, str):
        text = json.dumps(text, indent=2, ensure_ascii=False, default=str)
    return f"<pre>{esc(fmt.truncate(text, limit))}</pre>"


def _judges(scores: Mapping[str, Any]) -> str:
    if not scores:
        return '<p class="na">no judge scores</p>'
    rows = []
    for name, s in scores.items():
        s = s if isinstance(s, Mapping) else {"value": s}
        value = "errored: " + str(s.get("error") or "") if s.get("errored") else s.get("value")
        if isinstance(value, float) and not (math.isfinite(value) and abs(value) <= MAX_ABS_VALUE):
            value = f"errored: unusable value ({'not finite' if not math.isfinite(value) else 'too large'})"
        rows.append(f"<tr><td>{esc(name)}</td><td>{esc(value)}</td>"
                    f"<td>{esc(fmt.truncate(s.get('rationale') or '', MAX_RATIONALE))}</td></tr>")
    return ("<table><thead><tr><th>judge</th><th>value</th><th>rationale</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _facts(record: Mapping[str, Any]) -> str:
    """`` · latency 1.2 s · cost $0.01 · 512 tokens`` for what the record states."""
    out = ""
    for key, shown in (("latency_s", "latency {:.3g} s"), ("cost_usd", "cost ${:.4g}"),
                       ("tokens", "{:.0f} tokens")):
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            out += " · " + shown.format(value)
    return out


def _aeh_attempts(wanted: Mapping[str, Sequence[tuple[str, int]]], dirs: Mapping[str, Path],
                  formats: Mapping[str, RunFormat]) -> dict[tuple[str, str, int], str]:
    """(run id, case id, replication) -> its block, for each other-format run's ``wanted``
    (case id, replication) pairs. Run by run, so each run's files are read once: the
    drill-down's loop is case-major, and reading a case's run per case re-parsed the whole
    summary every time (quadratic in cases). agent-eval-harness's format parses only the
    shown cases' entries of each summary.yaml (the loader has parsed every summary whole,
    in its workers): :func:`eval_harness.aeh.cases.iter_cases`. Blocks, not cases, are
    kept: an answer is truncated in its block."""
    out: dict[tuple[str, str, int], str] = {}
    for run_id, pairs in wanted.items():
        reps = dict(pairs)  # a run is one replication: one pair per case
        for case in formats[run_id].read_cases(dirs[run_id], list(reps)):
            rep = reps[case.case_id]
            out[(run_id, case.case_id, rep)] = _aeh_attempt(case, rep)
    return out


def _aeh_attempt(case: CaseView | None, rep: int) -> str:
    """A case of another run format (agent-eval-harness: summary.yaml, run_result.json,
    cases/<id>/stdout.log); the texts name that layout's files, as before."""
    if case is None:
        return f'<p class="note">replication {rep} · not in summary.yaml</p>'
    head = f"replication {rep} · status {case.status}" + _facts(
        {"latency_s": case.latency_s, "cost_usd": case.cost_usd, "tokens": case.tokens})
    body = (_pre(case.output, MAX_ANSWER) if case.output is not None
            else '<p class="na">no answer kept (cases/&lt;id&gt;/stdout.log)</p>')
    scores = {j.name: {"value": j.value, "rationale": j.rationale, "errored": j.errored,
                       "error": j.error} for j in case.judges}
    return f'<p class="note">{esc(head)}</p>{body}{_judges(scores)}'


def _attempt(case_dir: Path, rep: int) -> str:
    record = _read_json(case_dir / "record.json")
    record = record if isinstance(record, dict) else {}
    outputs = _read_json(case_dir / "outputs.json")
    status = record.get("status", "unknown")
    head = f"replication {rep} · status {status}" + _facts(record)
    if record.get("reason"):
        head += f" · {record['reason']}"
    answer = outputs.get("output") if isinstance(outputs, Mapping) else None
    body = _pre(answer, MAX_ANSWER) if answer is not None else '<p class="na">no answer</p>'
    raw = record.get("scores")
    scores: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    return f'<p class="note">{esc(head)}</p>{body}{trace_html(case_dir)}{_judges(scores)}'


def omitted_note(n_cases: int, shown: int) -> str:
    """Says how many cases a bounded HTML section leaves out and where every case is."""
    return (f"{n_cases - shown} more case(s) not shown (shown: the first {shown} of the case "
            "grid, differing cases first, hardest first); every case × condition is in "
            "report.json's case_grid, or report.cases.jsonl when the grid is large")


def _text_isin(column: pd.Series, wanted: set[str]) -> np.ndarray:
    """``column.astype(str).isin(wanted)`` without a text copy of every row: a categorical
    is tested once per category."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        hit = np.array([str(c) in wanted for c in column.cat.categories] + [False], dtype=bool)
        return hit[column.cat.codes.to_numpy()]  # code -1 (missing) reads the False slot
    return column.astype(str).isin(wanted).to_numpy(dtype=bool)


def drilldown_html(report: Mapping[str, Any], frame: pd.DataFrame,
                   runs_root: Path | Sequence[Path] | None) -> str:
    """The drill-down section body (``not available`` without run directories)."""
    roots = [] if runs_root is None else (
        [Path(runs_root)] if isinstance(runs_root, (str, Path)) else [Path(r) for r in runs_root])
    roots = [r for r in roots if r.is_dir()]
    if not roots:
        return f'<p class="na">{esc(fmt.NOT_AVAILABLE)} (no run directories given)</p>'
    dirs = _run_dirs(frame, roots)
    if not dirs:
        return f'<p class="na">{esc(fmt.NOT_AVAILABLE)} (run directories not found)</p>'
    conds = report.get("conditions") or []
    cases = list((report.get("case_grid") or {}).get("cases") or [])
    shown = cases[:MAX_CASES]
    # Runs that hold per-case folders or are of another run format (agent-eval-harness:
    # a summary.yaml), and only the samples of the cases shown: the frame has a row per
    # sample and judge.
    other = {rid: get_format(layout) for rid, d in dirs.items()
             if (layout := classify_dir(d)) not in (None, NATIVE)}
    aeh = set(other)
    with_cases = {rid for rid, d in dirs.items() if (d / "cases").is_dir()} | aeh
    if not with_cases:
        return f'<p class="na">{esc(fmt.NOT_AVAILABLE)} (the runs keep no per-case folders)</p>'

    by_key: dict[tuple[str, str], list[tuple[int, str]]] = {}
    if shown:
        cols = ["case_id", "condition_id", "replication", "run_id"]
        pick = _text_isin(frame["case_id"], {str(c["case_id"]) for c in shown})
        samples = frame.loc[pick, cols].drop_duplicates().sort_values(["replication", "run_id"])
        for cid, cond, rep, rid in zip(*(samples[c].tolist() for c in cols), strict=True):
            if str(rid) in with_cases:
                by_key.setdefault((str(cid), str(cond)), []).append((int(rep), str(rid)))
    wanted: dict[str, list[tuple[str, int]]] = {}
    for (cid, _), attempts in by_key.items():
        for rep, run_id in attempts[:MAX_REPS]:
            if run_id in aeh and run_id in dirs and safe_component(cid):
                wanted.setdefault(run_id, []).append((cid, rep))
    aeh_blocks = _aeh_attempts(wanted, dirs, other)
    parts = []
    for case in shown:
        cid = case["case_id"]
        cells = " | ".join(cell_text(case["cells"].get(c["condition_id"])) or "–" for c in conds)
        inner: list[str] = []
        input_done = False
        for c in conds:
            attempts = by_key.get((cid, c["condition_id"]), [])[:MAX_REPS]
            blocks = []
            for rep, run_id in attempts:
                run_dir = dirs.get(run_id)
                if run_dir is None or not safe_component(cid):
                    continue
                if run_id in aeh:
                    blocks.append(aeh_blocks.get((run_id, cid, rep)) or _aeh_attempt(None, rep))
                    continue
                case_dir = run_dir / "cases" / cid
                if not inside(run_dir, case_dir):  # cases/<id> links out of the run
                    continue
                if not input_done:
                    inp = _read_json(case_dir / "input.json")
                    if inp is not None:
                        inner.insert(0, "<h4>input</h4>" + _pre(inp, MAX_INPUT))
                        input_done = True
                blocks.append(_attempt(case_dir, rep))
            if blocks:
                inner.append(f"<h4>{esc(c['label'])}</h4>" + "".join(blocks))
        flag = " (differs)" if case.get("differs") else ""
        parts.append(f"<details><summary>{esc(cid)}{esc(flag)} — {esc(cells)}</summary>"
                     f"{''.join(inner) or '<p class=na>no run files</p>'}</details>")
    if len(cases) > MAX_CASES:
        parts.append(f'<p class="note">{esc(omitted_note(len(cases), MAX_CASES))}; their '
                     'answers are under &lt;run&gt;/cases/&lt;case id&gt;/</p>')
    return "\n".join(parts)
