"""Writing one case of one run: the files, in an order that makes crashes harmless.

Order: (1) remove an old ``record.json`` (a rerun must not leave the previous verdict
standing beside new logs); (2) ``input.json``; (3) the runner writes ``stdout.log`` /
``stderr.log``; (4) ``command.json`` and ``outputs.json``; (5) judging; (6) ``record.json``
atomically (temp + rename). Only (6) marks the case complete, so a SIGKILL at any instant
leaves either a complete case or one the next run redoes.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Any

from eval_harness._util.atomic_files import StrPath, atomic_write_json, write_json
from eval_harness._util.file_modes import dir_mode, make_dirs
from eval_harness.store.records import SCHEMA_VERSION, CaseRecord, JudgeScore
from eval_harness.store.run_result import RunResult
from eval_harness.trace.model import mask_keys
from eval_harness.trace.reader import TRACE_FILE


def begin_case(case_dir: StrPath, resolved_input: dict[str, Any]) -> None:
    """Create the case folder, drop any old record (and temp files a killed writer left
    behind), write the resolved input."""
    case_dir = os.fspath(case_dir)
    try:
        os.mkdir(case_dir, dir_mode())
    except FileNotFoundError:  # the run's cases/ folder itself is missing
        make_dirs(case_dir)
    except FileExistsError:  # a rerun: clean up before anything new is written
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(case_dir, "record.json"))
        for entry in os.scandir(case_dir):
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
    write_json(os.path.join(case_dir, "input.json"), resolved_input)


def outputs_dict(result: RunResult) -> dict[str, Any]:
    """The DESIGN.md ``outputs`` dict a judge sees (stdout/stderr capped in memory); with
    ``execution.steps`` also ``steps``: step id -> that step's outputs."""
    out: dict[str, Any] = {
        "exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr,
        "output": result.output, "files": result.files, "latency_s": result.latency_s,
        "cost_usd": result.cost_usd, "tokens": result.total_tokens(),
        "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
        "tool_calls": result.tool_calls, "trace": result.steps,
        "modified_files": result.modified_files,
    }
    if result.step_results is not None:
        out["steps"] = result.step_results
    return out


def write_outputs(case_dir: StrPath, result: RunResult, attempts: int,
                  store_trace: bool = True) -> None:
    """``command.json`` (masked argv), ``outputs.json`` (everything but the logs and the
    trace) and ``trace.json`` (the trace, when one was reported and ``store_trace``; a rerun
    with ``--no-trace`` removes an older one)."""
    case_dir = os.fspath(case_dir)
    if result.argv is not None:
        write_json(os.path.join(case_dir, "command.json"), {"argv": result.argv})
    trace_path = os.path.join(case_dir, TRACE_FILE)
    if result.trace is not None and store_trace:
        write_json(trace_path, result.trace.to_json())
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(trace_path)
    data = outputs_dict(result)
    del data["stdout"], data["stderr"], data["trace"]  # stdout.log, stderr.log, trace.json
    data.update(schema_version=SCHEMA_VERSION, error=result.reason, failure=result.failure,
                attempts=attempts, reply=mask_keys(result.raw))
    write_json(os.path.join(case_dir, "outputs.json"), data)


def write_record(case_dir: StrPath, record: CaseRecord | dict[str, Any]) -> None:
    """Write ``record.json`` atomically: the case is complete from this instant.

    A dict is written as is (the caller built it JSON-ready, see
    :func:`record_json`); a model is dumped in JSON mode first."""
    data = record if isinstance(record, dict) else record.model_dump(mode="json")
    atomic_write_json(os.path.join(os.fspath(case_dir), "record.json"), data)


def record_json(data: dict[str, Any], scores: dict[str, JudgeScore]) -> dict[str, Any]:
    """The JSON form of a :class:`CaseRecord` built from trusted fields, without a pydantic
    round trip: what ``CaseRecord.model_validate(data).model_dump(mode="json")`` gives for
    the fields the runner writes (non-finite floats become null, as pydantic writes them;
    dates as ISO-8601 text)."""
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    out.update(data)
    for key in ("latency_s", "cost_usd", "composite"):
        value = out.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            out[key] = None
    out["scores"] = {name: (s if isinstance(s, JudgeScore) else JudgeScore.model_validate(s))
                     .model_dump(mode="json") for name, s in scores.items()}
    return out
