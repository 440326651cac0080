"""On-disk records of a run directory: the contract between execution and analysis.

Layout (DESIGN.md)::

    <runs-dir>/<eval>/<run-id>/
        run.json            RunRecord
        condition.json      {"condition_id", "levels"} (as agent-eval-harness writes it)
        cases/<case-id>/
            input.json      the resolved case input (overrides merged)
            command.json    argv with secrets masked (cli runners)
            stdout.log, stderr.log
            outputs.json    CaseOutputs
            trace.json      the agent's steps when it reported any (eval_harness.trace;
                            absent with --no-trace)
            record.json     CaseRecord, written last and atomically: its presence marks the
                            case complete; anything else in the folder without it is redone.

Analysis reads only ``run.json`` / ``condition.json`` and ``cases/*/record.json``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

CaseStatus = Literal["ok", "errored"]
JudgeKind = Literal["numeric", "boolean", "pairwise"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class RunRecord(_Record):
    """One run directory: one (condition, replication[, shard])."""

    schema_version: int = Field(SCHEMA_VERSION, description="Record format version.")
    eval: str = Field(description="Eval name (config `name`).")
    run_id: str = Field(description="Directory name of this run.")
    condition_id: str = Field(description="12-hex condition id (DESIGN.md).")
    levels: dict[str, Any] = Field(description="Factor -> level (variant name for variants).")
    replication: int = Field(1, description="1-based replication index.")
    config_digest: str = Field("", description="Digest of the condition's effective config.")
    tool_version: str = Field("", description="eval_harness version that wrote the run.")
    started_at: str | None = Field(None, description="ISO-8601 UTC start time.")
    finished_at: str | None = Field(None, description="ISO-8601 UTC end time (last update).")
    status: str = Field("running", description="running | complete | partial | aborted.")
    shard: str | None = Field(None, description="'K/N' when written by a shard, else null.")


class JudgeScore(_Record):
    """One judge's verdict on one sample."""

    value: float | bool | str | None = Field(
        None, description="Raw value: number, boolean, or win/tie/loss for pairwise."
    )
    kind: JudgeKind = Field("numeric", description="numeric | boolean | pairwise.")
    normalized: float | None = Field(None, description="Value mapped to [0, 1] by score_range.")
    score_range: list[float] | None = Field(None, description="[lo, hi] for numeric judges.")
    errored: bool = Field(False, description="True when the judge failed (never a zero).")
    error: str | None = Field(None, description="Why it errored.")
    skipped: bool = Field(False, description="Not run: its `condition` was false (no value).")
    rationale: str | None = Field(None, description="Judge's explanation.")
    gate: bool = Field(False, description="A false boolean gate zeroes the composite.")
    weight: float = Field(1.0, description="Weight in the composite mean.")


class CaseRecord(_Record):
    """The completion record of one case in one run; written last, atomically."""

    schema_version: int = Field(SCHEMA_VERSION, description="Record format version.")
    case_id: str = Field(description="Case id.")
    condition_id: str = Field(description="Condition id (repeated for robustness).")
    replication: int = Field(1, description="1-based replication index.")
    config_digest: str = Field("", description="Config digest the case ran under.")
    case_hash: str = Field("", description="Hash of the case definition (input + expected).")
    status: CaseStatus = Field("ok", description="ok, or errored (runner failed).")
    reason: str | None = Field(None, description="Why it errored.")
    exit_code: int | None = Field(None, description="Process exit code (cli runners).")
    latency_s: float | None = Field(None, description="Wall time of the call, seconds.")
    cost_usd: float | None = Field(None, description="Cost when known; null when unknown.")
    tokens: int | None = Field(None, description="Total tokens when reported.")
    tool_calls: int | None = Field(None, description="Tool calls when a trace was reported.")
    tags: dict[str, Any] = Field(default_factory=dict, description="Case tags (tier, domain...).")
    scores: dict[str, JudgeScore] = Field(
        default_factory=dict, description="Judge name -> score."
    )
    composite: float | None = Field(None, description="Composite in [0, 1]; null if errored.")
    composite_errored: bool = Field(False, description="True when any judge errored.")
    judges_digest: str = Field("", description="Digest of the judge specs (type, options, "
                               "range, weight, gate, composite block) that scored it.")
    finished_at: str | None = Field(None, description="ISO-8601 UTC time written.")
