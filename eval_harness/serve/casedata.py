"""One case across every run of an eval: what the case page shows, side by side.

This tool's runs: ``analysis.loading.browse.sample`` (input, answer, judges with rationales,
status, latency, cost, composite), plus from the same case folder the record's tokens and
tool-call count, the trace (``trace.json`` through :func:`eval_harness.trace.reader.read_trace`;
older runs kept their tool calls inline as ``outputs.json`` ``trace``) and the head of ``stdout.log`` / ``stderr.log``.
agent-eval-harness runs keep per-case files elsewhere: their judge values come from the
tidy frame. Reads ~4 small files per run: ~50 ms for 48 runs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from eval_harness._util.numbers import as_finite
from eval_harness.analysis.loading.browse import JudgeView, RunInfo, sample
from eval_harness.serve.evaldata import EvalData, RunMeta
from eval_harness.store.confine import RunFileProblem, open_run_file, read_run_json
from eval_harness.trace.reader import MAX_TRACE_BYTES, TRACE_FILE, read_trace

LOG_BYTES = 8192
#: what a case page shows at most: answer characters, trace steps and levels, and the
#: characters of one step's input / output (a 200 MB answer or a 200,000-step trace is
#: a page of a few MB, not hundreds)
MAX_SHOWN_CHARS = 100_000
MAX_SHOWN_STEPS = 500
MAX_SHOWN_DEPTH = 40
MAX_STEP_CHARS = 2_000


@dataclass
class Attempt:
    """One replication of one condition on the case."""

    run: RunMeta
    status: str
    reason: str | None
    output: str | None
    input: Any
    latency_s: float | None
    cost_usd: float | None
    tokens: int | None
    tool_calls: int | None
    composite: float | None
    judges: list[JudgeView] = field(default_factory=list)
    trace: list[Any] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    notes: list[str] = field(default_factory=list)  # what was not shown, and why


def _head(path: str) -> str:
    try:
        with open_run_file(path, "rb") as fh:
            data = fh.read(LOG_BYTES + 1)
    except OSError:
        return ""
    text = data[:LOG_BYTES].decode("utf-8", "replace")
    return text + ("\n… (cut)" if len(data) > LOG_BYTES else "")


def _native(run: RunMeta, case_id: str) -> Attempt | None:
    info = RunInfo(run.path, run.run_id, run.condition_id, run.levels, run.replication,
                   run.status, {})
    view = sample(info, case_id)
    if view is None:
        return None
    folder = os.path.join(run.path, "cases", case_id)
    notes: list[str] = []
    rec = _confined(os.path.join(folder, "record.json"), notes)
    outs = _confined(os.path.join(folder, "outputs.json"), notes)
    _confined(os.path.join(folder, "input.json"), notes)  # (read by sample: its note)
    stored = read_trace(folder)
    if stored is None and os.path.lexists(os.path.join(folder, TRACE_FILE)):
        notes.append(f"{TRACE_FILE} not shown: a symbolic link, larger than "
                     f"{MAX_TRACE_BYTES // 1_000_000} MB, nested too deep or not JSON")
    trace = (stored.to_json()["steps"] if stored is not None
             else outs.get("trace") if isinstance(outs, dict) else None)
    shown, trace_note = clip_steps(trace if isinstance(trace, list) else [])
    notes += [trace_note] if trace_note else []
    output = view.output
    if isinstance(output, str) and len(output) > MAX_SHOWN_CHARS:
        notes.append(f"answer cut to its first {MAX_SHOWN_CHARS:,} of {len(output):,} "
                     "characters")
        output = output[:MAX_SHOWN_CHARS] + "\n… (cut)"
    rec = rec if isinstance(rec, dict) else {}
    return Attempt(run=run, status=view.status, reason=view.reason, output=output,
                   input=view.input, latency_s=view.latency_s, cost_usd=view.cost_usd,
                   tokens=rec.get("tokens"), tool_calls=rec.get("tool_calls"),
                   composite=view.composite, judges=view.judges, trace=shown,
                   stdout=_head(os.path.join(folder, "stdout.log")),
                   stderr=_head(os.path.join(folder, "stderr.log")), notes=notes)


def _confined(path: str, notes: list[str]) -> Any:
    """A case file through the CLI's confined reader; a refusal becomes a note."""
    try:
        return read_run_json(path)
    except RunFileProblem as exc:
        notes.append(f"not shown: {exc}")
        return None


def _short_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_STEP_CHARS else text[:MAX_STEP_CHARS] + " … (cut)"


def clip_steps(steps: list[Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The trace as shown: at most :data:`MAX_SHOWN_STEPS` steps (depth first) and
    :data:`MAX_SHOWN_DEPTH` levels, each step's input and output as JSON text of at most
    :data:`MAX_STEP_CHARS` characters; built without recursion (a trace of any depth).
    Returns (steps, a note saying what was left out, or None)."""
    out: list[dict[str, Any]] = []
    total = shown = 0
    deepest = False
    stack: list[tuple[Any, list[dict[str, Any]], int]] = [
        (s, out, 1) for s in reversed(steps)]
    while stack:
        step, into, depth = stack.pop()
        total += 1
        if shown >= MAX_SHOWN_STEPS:
            continue
        if depth > MAX_SHOWN_DEPTH:
            deepest = True
            continue
        shown += 1
        if not isinstance(step, dict):
            into.append({"text": _short_json(step)})
            continue
        args = step.get("arguments") or step.get("input") or {}
        node: dict[str, Any] = {
            "kind": str(step.get("kind") or "")[:40],
            "name": str(step.get("tool") or step.get("name") or "step")[:200],
            "args": _short_json(args),
            "output": None if step.get("output") is None else _short_json(step["output"]),
            "duration": step.get("duration"), "children": []}
        into.append(node)
        kids = step.get("children")
        if isinstance(kids, list):
            stack.extend((k, node["children"], depth + 1) for k in reversed(kids))
    if shown == total and not deepest:
        return out, None
    what = f"trace cut: {shown:,} of {total:,}+ steps shown"
    return out, what + (f", {MAX_SHOWN_DEPTH} levels deep at most" if deepest else "")



def _from_frame(data: EvalData, run: RunMeta, case_id: str) -> Attempt | None:
    f = data.frame
    rows = f[(f["run_id"].astype(str) == run.run_id) & (f["case_id"].astype(str) == case_id)]
    if rows.empty:
        return None
    judges = [JudgeView(str(r.judge), r.value, None, bool(r.errored), None)
              for r in rows.itertuples() if str(r.judge) != "composite"]
    comp = rows[rows["judge"].astype(str) == "composite"]
    first = rows.iloc[0]
    return Attempt(run=run, status=str(first["case_status"]), reason=None, output=None,
                   input=None, latency_s=as_finite(first["latency_s"]), cost_usd=as_finite(first["cost_usd"]),
                   tokens=None, tool_calls=None,
                   composite=as_finite(comp.iloc[0]["value"]) if len(comp) else None, judges=judges)


def case_attempts(data: EvalData, case_id: str) -> dict[str, list[Attempt]]:
    """condition_id -> the case's attempts (replication order), in matrix order."""
    out: dict[str, list[Attempt]] = {cid: [] for cid in data.condition_ids}
    for run in sorted(data.runs.values(), key=lambda r: (r.condition_id, r.replication)):
        got = _native(run, case_id) if run.layout == "native" else _from_frame(data, run, case_id)
        if got is not None:
            out.setdefault(run.condition_id, []).append(got)
    return {cid: atts for cid, atts in out.items() if atts}
