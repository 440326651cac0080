"""The ``reward`` block (agent-eval-harness): how judges compose into the composite.

Semantics and formulas: :mod:`eval_harness.judges.reward`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import Field, StrictBool, model_validator

from eval_harness.config.formula import parse_formula
from eval_harness.config.strict_block import Block


@dataclass(frozen=True)
class RewardSpec:
    """A ``reward:`` block, resolved (semantics: :mod:`eval_harness.judges.reward`)."""

    formula: str = "weighted"
    weights: Mapping[str, float] = field(default_factory=dict)
    gate: bool = True
    score_range: tuple[float, float] | None = None
    raw: tuple[str, ...] = ()
    judge: str | None = None
    normalize: bool = False


class RewardBlock(Block):
    """``reward``: a single judge, a weighted mean, or an arithmetic formula over judges."""

    formula: str | None = Field(None, description="`weighted` (default) or an expression "
                                "over judge names (+ - * / // %, comparisons, min/max/mean...).")
    weights: dict[str, float] = Field(default_factory=dict, description="weighted: judge -> weight.")
    gate: StrictBool | None = Field(None, description="A false boolean judge zeroes the reward "
                                    "(default true; false with `judge`).")
    score_range: list[float] | None = Field(None, description="Fallback [lo, hi] for judges "
                                            "without their own (default [1, 5]).")
    raw: list[str] = Field(default_factory=list, description="Judges already in [0, 1]: clipped, "
                           "not scaled.")
    judge: str | None = Field(None, description="The judge whose value is the reward.")
    normalize: StrictBool = Field(False, description="With `judge`: scale over its range "
                                  "instead of clipping.")

    @model_validator(mode="after")
    def _check(self) -> RewardBlock:
        if self.judge is not None and (self.formula is not None or self.weights or self.raw):
            raise ValueError("reward.judge cannot be combined with formula, weights or raw")
        if any(w < 0 for w in self.weights.values()):
            raise ValueError("reward.weights must be >= 0")
        if self.score_range is not None and (len(self.score_range) != 2
                                             or self.score_range[0] >= self.score_range[1]):
            raise ValueError("reward.score_range must be [lo, hi] with lo < hi")
        formula = (self.formula or "weighted").strip()
        if self.judge is None and formula != "weighted":
            try:
                parse_formula(formula)
            except ValueError as exc:
                raise ValueError(f"reward.formula is invalid: {exc}") from None
        return self

    def to_spec(self) -> RewardSpec:
        """The resolved :class:`RewardSpec`."""
        rng = (float(self.score_range[0]), float(self.score_range[1])) if self.score_range else None
        return RewardSpec(formula=(self.formula or "weighted"), weights=dict(self.weights),
                          gate=self.gate if self.gate is not None else self.judge is None,
                          score_range=rng, raw=tuple(self.raw), judge=self.judge,
                          normalize=self.normalize)
