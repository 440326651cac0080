"""Executing one cell: call (with retries), write outputs, judge, write the record.

Retries (:mod:`eval_harness._util.retrying`, the policy LLM judges use too): only ``transient``
failures — network errors, HTTP 408/409/429/5xx, exit codes listed in
``execution.transient_exit_codes`` — up to ``execution.retries`` times, waiting
``max(Retry-After, initial·2^(n−1) + U(0, initial))`` capped at ``max`` seconds
(exponential backoff with jitter; the server's Retry-After is a floor).
Quota/auth failures are not retried here: they go back to the engine, which decides
whether to abort (see :mod:`eval_harness.runner.engine`).
"""

from __future__ import annotations

import threading
from typing import Any

from eval_harness._util.clock import utc_timestamp
from eval_harness._util.retrying import Backoff, call_with_backoff
from eval_harness.judges.interface import Sample, Scorer, ScoreResult
from eval_harness.runner.contract import Runner, RunRequest, RunResult
from eval_harness.runner.scrub import scrub_result
from eval_harness.runner.workspace import annotation_contents
from eval_harness.store.case_writer import outputs_dict, record_json, write_outputs, write_record


def call_with_retries(runner: Runner, request: RunRequest, retries: int, backoff: Backoff,
                      stop: threading.Event) -> tuple[RunResult, int]:
    """Run until not transient, out of retries, or ``stop`` is set; (last result, attempts)
    (the policy: :mod:`eval_harness._util.retrying`). Attempts include the calls a wrapper made
    itself (the adaptive limiter's rate-limit retries: ``RunResult.extra_attempts``)."""
    extra = 0

    def call() -> RunResult:
        nonlocal extra
        result = scrub_result(runner.run(request))  # valid text, no over-deep reply
        extra += result.extra_attempts
        return result

    result, attempts = call_with_backoff(call, transient=lambda r: r.failure == "transient",
                                         retry_after=lambda r: r.retry_after, retries=retries,
                                         backoff=backoff, stop=stop)
    return result, attempts + extra


def score_sample(scorer: Scorer | None, sample: Sample) -> tuple[ScoreResult | None, str | None]:
    """(scores, None), or (None, reason) when the scorer itself raised."""
    if scorer is None:
        return ScoreResult(), None
    try:
        return scorer.score(sample), None
    except Exception as exc:  # a judge crash must not lose the case
        return None, f"scoring failed: {type(exc).__name__}: {exc}"[:300]


def finish_cell_data(
    *, request: RunRequest, result: RunResult, attempts: int, scorer: Scorer | None,
    expected: Any, annotations: dict[str, Any], case_hash: str, tags: dict[str, Any],
    digest: str, run_id: str, extra: dict[str, Any] | None = None, store_trace: bool = True,
) -> dict[str, Any]:
    """Write outputs, judge an ok result, write ``record.json``; return the record as
    written (a JSON dict; the engine reads a few fields, so no model is built per cell)."""
    case_dir = str(request.case_dir)
    write_outputs(case_dir, result, attempts, store_trace)
    status, reason = ("ok", None) if result.ok else ("errored", result.reason or result.failure)
    scores: ScoreResult | None = None
    if status == "ok":
        scores, why = score_sample(scorer, Sample(
            case_id=request.case_id, input=request.input, expected=expected,
            annotations=annotations, levels=request.levels,
            outputs={**outputs_dict(result),
                     **annotation_contents(annotations, request.case_files)},
            condition_id=request.condition_id, replication=request.replication))
        if scores is None:
            status, reason = "errored", why
    data: dict[str, Any] = {
        "case_id": request.case_id, "condition_id": request.condition_id,
        "replication": request.replication, "config_digest": digest, "case_hash": case_hash,
        "status": status, "reason": reason, "exit_code": result.exit_code,
        # a cache hit's latency is not this run's: kept apart, never analysed as latency
        "latency_s": None if result.cache_hit else result.latency_s, "cost_usd": result.cost_usd,
        "tokens": result.total_tokens(), "tool_calls": result.tool_calls, "tags": tags,
        "composite": scores.composite if scores else None,
        "composite_errored": scores.composite_errored if scores else False,
        "judges_digest": scores.judges_digest if scores else "",
        "finished_at": utc_timestamp(),
        # added fields (records.py allows extras): provenance and token split
        "run_id": run_id, "attempts": attempts, "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens, "levels": request.levels, **(extra or {}),
    }
    if result.cost_source is not None:
        data["cost_source"] = result.cost_source
    if result.cache_hit:
        data.update(cache_hit=True, cached_latency_s=result.latency_s)
    if result.notes:
        data["notes"] = list(result.notes)
    digests = getattr(scorer, "judge_digests", None)
    if scores is not None and callable(digests):  # which judge specs gave these verdicts
        data["judge_digests"] = digests(request.condition_id)
    judged = dict(scores.scores) if scores else {}
    # built from trusted fields: written without a pydantic validate + dump round trip
    # (a third of the per-cell Python time for a cheap cell); for the same reason the
    # engine gets this dict back, not a model
    out = record_json(data, judged)
    write_record(case_dir, out)
    return out
