"""Executing one cell: call (with retries), write outputs, judge, write the record.

Retries (tenacity): only ``transient`` failures — network errors, HTTP 408/409/429/5xx,
exit codes listed in ``execution.transient_exit_codes`` — up to ``execution.retries``
times, waiting ``max(Retry-After, initial·2^(n−1) + U(0, initial))`` capped at ``max``
seconds (exponential backoff with jitter; the server's Retry-After is a floor).
Quota/auth failures are not retried here: they go back to the engine, which decides
whether to abort (see :mod:`eval_harness.runner.engine`).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_result,
    stop_after_attempt,
    stop_when_event_set,
)

from eval_harness.judges.api import Sample, Scorer, ScoreResult
from eval_harness.runner.base import Runner, RunRequest, RunResult
from eval_harness.runner.workspace import annotation_contents
from eval_harness.store.records import CaseRecord, JudgeScore
from eval_harness.store.rundirs import utc_now
from eval_harness.store.writer import outputs_dict, record_json, write_outputs, write_record


@dataclass(frozen=True)
class Backoff:
    """Retry waits, seconds."""

    initial: float = 1.0
    maximum: float = 60.0
    max_retry_after: float = 300.0  # never wait longer than this for one Retry-After


def call_with_retries(runner: Runner, request: RunRequest, retries: int, backoff: Backoff,
                      stop: threading.Event) -> tuple[RunResult, int]:
    """Run until not transient, out of retries, or ``stop`` is set; (last result, attempts)."""
    attempts = 0

    def once() -> RunResult:
        nonlocal attempts
        attempts += 1
        return runner.run(request)

    def wait(state: RetryCallState) -> float:
        # exponential backoff with full-width jitter (the tenacity helper's keyword names
        # changed across versions, so it is spelled out here)
        n = state.attempt_number + 1  # the fast-path call was attempt 1
        base = min(backoff.maximum, backoff.initial * 2 ** (n - 1) + random.uniform(0, backoff.initial))
        outcome = state.outcome
        if outcome is not None and not outcome.failed:
            after = outcome.result().retry_after
            if after is not None:
                return max(base, min(after, backoff.max_retry_after))
        return base

    first = runner.run(request)  # fast path: most calls succeed and need no retry machinery
    if first.failure != "transient" or retries == 0:
        return first, 1
    attempts = 1
    retrying = Retrying(
        stop=stop_after_attempt(retries) | stop_when_event_set(stop),
        wait=wait,
        retry=retry_if_result(lambda r: r.failure == "transient"),
        retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
        sleep=lambda seconds: _sleep(stop, seconds),
        reraise=True,
    )
    _sleep(stop, wait_first(first, backoff))
    if stop.is_set():
        return first, attempts
    result: RunResult = retrying(once)
    return result, attempts


def wait_first(result: RunResult, backoff: Backoff) -> float:
    """Wait before the first retry (the same rule as later ones, attempt 1)."""
    base = min(backoff.maximum, backoff.initial + random.uniform(0, backoff.initial))
    if result.retry_after is not None:
        return max(base, min(result.retry_after, backoff.max_retry_after))
    return base


def _sleep(stop: threading.Event, seconds: float) -> None:
    stop.wait(seconds)  # an abort wakes the sleeper early


def score_sample(scorer: Scorer | None, sample: Sample) -> tuple[ScoreResult | None, str | None]:
    """(scores, None), or (None, reason) when the scorer itself raised."""
    if scorer is None:
        return ScoreResult(), None
    try:
        return scorer.score(sample), None
    except Exception as exc:  # a judge crash must not lose the case
        return None, f"scoring failed: {type(exc).__name__}: {exc}"[:300]


def finish_cell(
    *, request: RunRequest, result: RunResult, attempts: int, scorer: Scorer | None,
    expected: Any, annotations: dict[str, Any], case_hash: str, tags: dict[str, Any],
    digest: str, run_id: str, extra: dict[str, Any] | None = None, store_trace: bool = True,
) -> CaseRecord:
    """Write outputs, judge an ok result, write ``record.json``; return the record."""
    data = finish_cell_data(request=request, result=result, attempts=attempts, scorer=scorer,
                            expected=expected, annotations=annotations, case_hash=case_hash,
                            tags=tags, digest=digest, run_id=run_id, extra=extra,
                            store_trace=store_trace)
    data = dict(data)
    judged = {name: JudgeScore.model_validate(s) for name, s in data.pop("scores").items()}
    del data["schema_version"]
    return CaseRecord.model_construct(scores=judged, **data)


def finish_cell_data(
    *, request: RunRequest, result: RunResult, attempts: int, scorer: Scorer | None,
    expected: Any, annotations: dict[str, Any], case_hash: str, tags: dict[str, Any],
    digest: str, run_id: str, extra: dict[str, Any] | None = None, store_trace: bool = True,
) -> dict[str, Any]:
    """:func:`finish_cell`, returning the record as written to ``record.json`` (a JSON
    dict; the engine reads a few fields, so no model is built per cell)."""
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
        "latency_s": result.latency_s, "cost_usd": result.cost_usd,
        "tokens": result.total_tokens(), "tool_calls": result.tool_calls, "tags": tags,
        "composite": scores.composite if scores else None,
        "composite_errored": scores.composite_errored if scores else False,
        "finished_at": utc_now(),
        # added fields (records.py allows extras): provenance and token split
        "run_id": run_id, "attempts": attempts, "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens, "levels": request.levels, **(extra or {}),
    }
    if result.notes:
        data["notes"] = list(result.notes)
    judged = dict(scores.scores) if scores else {}
    # built from trusted fields: written without a pydantic validate + dump round trip
    # (a third of the per-cell Python time for a cheap cell); for the same reason the
    # engine gets this dict back, not a model
    out = record_json(data, judged)
    write_record(case_dir, out)
    return out
