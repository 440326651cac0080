"""The ``judges``, ``composite`` and ``thresholds`` blocks."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool, model_validator

from eval_harness.config.base import Block

#: fields that select a judge kind (the kind is inferred from which is present)
KIND_FIELDS = (
    "check", "prompt", "prompt_file", "module", "exact_match", "contains", "regex",
    "entity_coverage", "tool_calls", "tool_called", "latency", "cost", "json_schema",
    "reference_correctness", "pairwise",
)


class JudgeBlock(Block):
    """One judge; its kind is inferred from the fields present."""

    name: str = Field(description="Unique judge name (not `composite`).")
    description: str | None = Field(None, description="What it checks.")
    check: str | None = Field(None, description="Inline Python body returning (value, rationale).")
    prompt: str | None = Field(None, description="LLM judge prompt template.")
    prompt_file: str | None = Field(None, description="LLM judge prompt file (relative to config).")
    module: str | None = Field(None, description="Python module of a function judge.")
    function: str | None = Field(None, description="Function name in `module`.")
    model: str | None = Field(None, description="Judge model `provider:model` (LLM judges).")
    score_range: list[float] | None = Field(None, description="[lo, hi] of a numeric judge.")
    samples: int = Field(1, ge=1, description="Samples, reduced by median / majority.")
    weight: float = Field(1.0, ge=0, description="Weight in the composite.")
    gate: StrictBool = Field(False, description="Boolean gate: false zeroes the composite.")
    exact_match: Any = Field(None, description="Built-in: compare with expected (options mapping or true).")
    contains: Any = Field(None, description="Built-in: answer contains string(s).")
    regex: Any = Field(None, description="Built-in: answer matches a regex.")
    entity_coverage: Any = Field(None, description="Built-in: fraction of expected entities present.")
    tool_calls: Any = Field(None, description="Built-in: tool-call budget.")
    tool_called: Any = Field(None, description="Built-in: a tool was called (with arguments).")
    latency: Any = Field(None, description="Built-in: latency limit, seconds.")
    cost: Any = Field(None, description="Built-in: cost limit, USD.")
    json_schema: Any = Field(None, description="Built-in: answer validates against a schema.")
    reference_correctness: Any = Field(None, description="Built-in LLM judge against the reference.")
    pairwise: Any = Field(None, description="Pairwise LLM judge (excluded from the ANOVA).")

    @model_validator(mode="after")
    def _kind(self) -> JudgeBlock:
        present = [f for f in KIND_FIELDS if getattr(self, f) is not None]
        if self.name == "composite":
            raise ValueError("`composite` is reserved for the combined score")
        if not present:
            raise ValueError("a judge needs one of: " + ", ".join(KIND_FIELDS))
        if "prompt" in present and "prompt_file" in present:
            raise ValueError("give `prompt` or `prompt_file`, not both")
        if self.module and not self.function:
            raise ValueError("`module` needs `function`")
        if self.score_range is not None and (
            len(self.score_range) != 2 or self.score_range[0] >= self.score_range[1]
        ):
            raise ValueError("score_range must be [lo, hi] with lo < hi")
        return self


class CompositeBlock(Block):
    """``composite``: how judges combine into the per-sample composite."""

    judges: list[str] | None = Field(None, description="Judges that enter (default: all non-pairwise).")
    weights: dict[str, float] = Field(default_factory=dict, description="Judge -> weight override.")
    gates: list[str] = Field(default_factory=list, description="Boolean judges acting as gates.")


class ThresholdSpec(Block):
    """A threshold on one judge or on the composite, checked per condition."""

    min_pass_rate: float | None = Field(None, ge=0, le=1, description="Minimum pass rate.")
    min_mean: float | None = Field(None, description="Minimum mean value.")


class ThresholdsBlock(Block):
    """``thresholds``: top-level keys apply to the composite; `judges` per judge."""

    min_pass_rate: float | None = Field(None, ge=0, le=1, description="Composite pass rate minimum.")
    min_mean: float | None = Field(None, description="Composite mean minimum.")
    judges: dict[str, ThresholdSpec] = Field(default_factory=dict, description="Per judge.")
