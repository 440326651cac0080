"""The per-sample composite.

composite = Σ wᵢ·nᵢ / Σ wᵢ over the judges that enter (default: every non-pairwise judge;
``composite.judges`` narrows it), where nᵢ is the judge's value normalised to [0, 1] by its
score range (booleans 0/1) and wᵢ its ``weight`` (``composite.weights`` overrides). A
boolean ``gate`` judge (``gate: true`` or listed in ``composite.gates``) that is false makes
the composite 0. An errored judge that enters makes the composite *errored* (None), never 0:
the sample is excluded from the analysis and listed. No entering judge (or all weights 0)
gives None without an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eval_harness.judges.reward import JudgeResult, reward
from eval_harness.store.records import JudgeScore


def combine(scores: Mapping[str, JudgeScore], entering: Sequence[str]) -> tuple[float | None, bool]:
    """(composite or None, composite_errored); a judge skipped by its condition is absent."""
    present = [scores[n] for n in entering if n in scores and not scores[n].skipped]
    if any(s.errored for s in present):
        return None, True
    if any(s.gate and s.kind == "boolean" and s.value is False for s in present):
        return 0.0, False
    total = sum(s.weight for s in present)
    if not present or total <= 0:
        return None, False
    value = sum(s.weight * float(s.normalized or 0.0) for s in present) / total
    return value, False


def reward_composite(scores: Mapping[str, JudgeScore], blocks: Sequence[Any],
                     block: Any) -> tuple[float | None, bool]:
    """The composite under a ``reward:`` block (:mod:`eval_harness.judges.reward`)."""
    ranges = {b.name: (float(b.score_range[0]), float(b.score_range[1]))
              for b in blocks if b.score_range}
    results = {name: JudgeResult(None if s.errored or s.skipped
                                 or isinstance(s.value, str) else s.value, errored=s.errored)
               for name, s in scores.items() if s.kind != "pairwise"}
    return reward(results, ranges, block.to_spec())
