"""The interface between execution and judging.

The run engine (runner stage) never imports judges: the CLI builds a :class:`Scorer` from
the config (``eval_harness.judges.scorer.build_scorer``) and injects it. The engine calls
``score`` after a case's outputs are on disk and before its record is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from eval_harness.store.records import JudgeScore


@dataclass(frozen=True)
class ScoreResult:
    """Every judge's verdict on one sample, and the composite."""

    scores: dict[str, JudgeScore] = field(default_factory=dict)
    composite: float | None = None
    composite_errored: bool = False
    #: digest of the judge specs that scored it (a changed judge = a modified case)
    judges_digest: str = ""


@dataclass(frozen=True)
class Sample:
    """What a judge sees of one sample."""

    case_id: str
    input: dict[str, Any]  # resolved input (overrides merged)
    expected: Any
    annotations: dict[str, Any]
    outputs: dict[str, Any]  # DESIGN.md `outputs` dict (exit_code, stdout, output, files, ...)
    levels: dict[str, Any]
    condition_id: str
    replication: int


class Scorer(Protocol):
    """Scores one sample; never raises for a judge failure (that is an errored score)."""

    def score(self, sample: Sample) -> ScoreResult:
        """Run every (non-pairwise) judge on ``sample``."""
        ...
