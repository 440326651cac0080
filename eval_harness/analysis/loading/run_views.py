"""What people see of run directories (``orchestrate runs`` / ``show``, the report's
drill-down, the dashboard): one run, one case, one judge's verdict. Every run format
reads its runs into these (:mod:`eval_harness.analysis.loading.formats`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunInfo:
    """One run directory: its condition, replication, status and case counts."""

    path: Path
    run_id: str
    condition_id: str
    levels: dict[str, Any]
    replication: int
    status: str
    counts: dict[str, int]  # case status (ok / errored / incomplete) -> number of cases
    layout: str = "native"  # the name of its run format (analysis.loading.formats)


@dataclass(frozen=True)
class JudgeView:
    """One judge's verdict on one sample."""

    name: str
    value: Any
    rationale: str | None
    errored: bool
    error: str | None


@dataclass(frozen=True)
class CaseView:
    """One case of one run, as a run format reads it: status, composite, judges with
    rationales, latency / cost / tokens, the answer and the input (None: not kept)."""

    case_id: str
    status: str  # ok | errored | incomplete
    composite: float | None
    judges: list[JudgeView] = field(default_factory=list)
    latency_s: float | None = None
    cost_usd: float | None = None
    tokens: float | None = None
    output: str | None = None
    input: Any = None
    reason: str | None = None  # why it errored, when known


@dataclass(frozen=True)
class SampleView:
    """One case in one run: what it was asked, what it answered, how it was judged."""

    run: RunInfo
    case_id: str
    status: str  # ok | errored | incomplete (no record.json yet)
    reason: str | None
    input: Any
    output: str | None
    latency_s: float | None
    cost_usd: float | None
    composite: float | None
    judges: list[JudgeView] = field(default_factory=list)
