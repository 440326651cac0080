"""One case across every run of an eval: what the case page shows, side by side.

This tool's runs: ``analysis.loading.browse.sample`` (input, answer, judges with rationales,
status, latency, cost, composite), plus from the same case folder the record's tokens and
tool-call count, the trace (``trace.json`` through :func:`eval_harness.trace.reader.read_trace`;
older runs kept their tool calls inline as ``outputs.json`` ``trace``) and the head of ``stdout.log`` / ``stderr.log``.
agent-eval-harness runs keep per-case files elsewhere: their judge values come from the
tidy frame. Reads ~4 small files per run: ~50 ms for 48 runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from eval_harness._util.atomic_files import read_json
from eval_harness._util.numbers import as_finite
from eval_harness.analysis.loading.browse import JudgeView, RunInfo, sample
from eval_harness.serve.evaldata import EvalData, RunMeta
from eval_harness.store.confine import open_run_file
from eval_harness.trace.reader import read_trace

LOG_BYTES = 8192


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
    rec = read_json(os.path.join(folder, "record.json")) or {}
    outs = read_json(os.path.join(folder, "outputs.json")) or {}
    stored = read_trace(folder)
    trace = (stored.to_json()["steps"] if stored is not None
             else outs.get("trace") if isinstance(outs, dict) else None)
    return Attempt(run=run, status=view.status, reason=view.reason, output=view.output,
                   input=view.input, latency_s=view.latency_s, cost_usd=view.cost_usd,
                   tokens=rec.get("tokens"), tool_calls=rec.get("tool_calls"),
                   composite=view.composite, judges=view.judges,
                   trace=trace if isinstance(trace, list) else [],
                   stdout=_head(os.path.join(folder, "stdout.log")),
                   stderr=_head(os.path.join(folder, "stderr.log")))



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
