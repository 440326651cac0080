"""The ``judges``, ``composite`` and ``thresholds`` blocks.

A judge's kind is inferred from the one kind field it carries (``check``, ``prompt`` /
``prompt_file``, ``module`` + ``function``, a built-in such as ``exact_match``, or
``pairwise``); see ``eval_harness/judges/`` for each kind's options.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, StrictBool, ValidationInfo, field_validator, model_validator

from eval_harness.config.judge_options import BUILTIN_OPTIONS, unknown_option
from eval_harness.config.strict_block import Block

#: fields that select a judge kind (the kind is inferred from which is present)
KIND_FIELDS = (
    "check", "prompt", "prompt_file", "module", "exact_match", "contains", "regex",
    "entity_coverage", "tool_calls", "tool_called", "max_steps", "retrieval", "latency", "cost",
    "json_schema", "reference_correctness", "faithfulness", "context_relevance", "pairwise",
)
#: kinds that call an LLM
LLM_KINDS = ("prompt", "prompt_file", "reference_correctness", "faithfulness",
             "context_relevance", "pairwise")


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
    base_url: str | None = Field(None, description="LLM judges: API base URL of this judge "
                                 "(else models.judge_base_url, else the environment).")
    api_key: str | None = Field(None, description="LLM judges: key, as ${VAR} only (else "
                                "models.judge_api_key, else the environment).")
    score_range: list[float] | None = Field(None, description="[lo, hi] of a numeric judge.")
    feedback_type: Literal["bool", "int", "float"] | None = Field(
        None, description="Verdict shape (agent-eval-harness): bool, or a number (int/float).")
    condition: str | None = Field(
        None, description="Python expression over the outputs fields (`annotations`, "
        "`output`, `files`...), `input`, `expected`; false skips the judge for that case "
        "(agent-eval-harness `if`).")
    samples: int = Field(1, ge=1, description="Samples, reduced by median / majority.")
    weight: float = Field(1.0, ge=0, description="Weight in the composite.")
    gate: StrictBool = Field(False, description="Boolean gate: false zeroes the composite.")
    temperature: float | None = Field(0.0, ge=0, description="LLM judges: temperature (null: provider default).")
    max_tokens: int = Field(1024, ge=16, description="LLM judges: reply token limit.")
    timeout: float = Field(60.0, gt=0, description="Code judges (check, module): seconds per "
                           "call; then the judge is errored for that sample.")
    cost_per_mtok: list[float] | None = Field(
        None, description="LLM judges: USD per million [input, output] tokens, for recorded cost.")
    exact_match: Any = Field(None, description="Built-in: compare with expected (options mapping or true).")
    contains: Any = Field(None, description="Built-in: answer contains string(s).")
    regex: Any = Field(None, description="Built-in: answer matches a regex.")
    entity_coverage: Any = Field(None, description="Built-in: fraction of expected entities present.")
    tool_calls: Any = Field(None, description="Built-in: tool-call budget.")
    tool_called: Any = Field(None, description="Built-in: a tool was called (args, times, not).")
    max_steps: Any = Field(None, description="Built-in: at most N trace steps (of a kind).")
    retrieval: Any = Field(None, description="Built-in: recall@k / precision@k / MRR of the "
                           "trace's retrieved documents against expected_docs.")
    latency: Any = Field(None, description="Built-in: latency limit, seconds.")
    cost: Any = Field(None, description="Built-in: cost limit, USD.")
    json_schema: Any = Field(None, description="Built-in: answer validates against a schema.")
    reference_correctness: Any = Field(None, description="Built-in LLM judge against the reference.")
    faithfulness: Any = Field(None, description="Built-in LLM judge: the answer is grounded in "
                              "the retrieved documents (true or {max_docs}).")
    context_relevance: Any = Field(None, description="Built-in LLM judge: the retrieved "
                                   "documents are on topic for the case (true or {max_docs}).")
    pairwise: Any = Field(None, description="Pairwise LLM judge (excluded from the ANOVA).")
    arguments: dict[str, Any] | None = Field(
        None, description="Judge arguments (agent-eval-harness): `arguments` in a check, "
        "keyword arguments of a module function, `{{ arguments.x }}` in a prompt.")
    step: str | None = Field(None, description="Judge only this execution step's result "
                             "(agent-eval-harness `step`: its outputs are that step's).")
    context: list[str] = Field(default_factory=list, description="LLM judges: files (relative "
                               "to the config) appended to the prompt under `## Context: <name>`.")

    @field_validator(*BUILTIN_OPTIONS)
    @classmethod
    def _known_options(cls, value: Any, info: ValidationInfo) -> Any:
        problem = unknown_option(str(info.field_name), value)
        if problem:
            raise ValueError(problem)
        return value

    @property
    def kind_field(self) -> str:
        """The field that selects this judge's kind."""
        return next(f for f in KIND_FIELDS if getattr(self, f) is not None)

    @property
    def is_llm(self) -> bool:
        """Whether the judge calls a model."""
        return self.kind_field in LLM_KINDS

    @field_validator("name")
    @classmethod
    def _printable_name(cls, value: str) -> str:
        # a judge name reaches terminals, report headings and record keys: no line breaks,
        # escapes or other control characters
        if not value or any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value):
            raise ValueError("judge name must be non-empty, without line breaks or control "
                             "characters")
        return value

    @model_validator(mode="after")
    def _kind(self) -> JudgeBlock:
        present = [f for f in KIND_FIELDS if getattr(self, f) is not None]
        if self.name == "composite":
            raise ValueError("`composite` is reserved for the combined score")
        if not present:
            raise ValueError("a judge needs one of: " + ", ".join(KIND_FIELDS))
        if "prompt" in present and "prompt_file" in present:
            raise ValueError("give `prompt` or `prompt_file`, not both")
        if len(present) > 1:
            raise ValueError(f"one kind per judge; got {', '.join(present)} (split into judges)")
        if self.module and not self.function:
            raise ValueError("`module` needs `function`")
        if self.function and not self.module:
            raise ValueError("`function` needs `module`")
        if self.score_range is not None and (
            len(self.score_range) != 2 or self.score_range[0] >= self.score_range[1]
        ):
            raise ValueError("score_range must be [lo, hi] with lo < hi")
        if self.score_range is not None and any(
                not math.isfinite(x) or abs(x) > 1e150 for x in self.score_range):
            raise ValueError("score_range bounds must be finite numbers within ±1e150")
        if self.feedback_type == "bool" and self.score_range is not None:
            raise ValueError("score_range has no meaning with feedback_type: bool")
        if self.condition is not None:
            try:
                compile(self.condition, "<condition>", "eval")
            except SyntaxError as exc:
                raise ValueError(f"condition is not a Python expression: {exc.msg}") from None
        if self.cost_per_mtok is not None and (
            len(self.cost_per_mtok) != 2 or min(self.cost_per_mtok) < 0
        ):
            raise ValueError("cost_per_mtok must be [input_usd, output_usd] per million tokens")
        return self


class CompositeBlock(Block):
    """``composite``: how judges combine into the per-sample composite."""

    judges: list[str] | None = Field(None, description="Judges that enter (default: all non-pairwise).")
    weights: dict[str, float] = Field(default_factory=dict, description="Judge -> weight override.")
    gates: list[str] = Field(default_factory=list, description="Boolean judges acting as gates.")

    @model_validator(mode="after")
    def _weights(self) -> CompositeBlock:
        bad = [k for k, v in self.weights.items() if v < 0]
        if bad:
            raise ValueError(f"weights must be >= 0 ({', '.join(bad)})")
        return self


class ThresholdSpec(Block):
    """A threshold on one judge or on the composite, checked per condition."""

    min_pass_rate: float | None = Field(None, ge=0, le=1, description="Minimum pass rate.")
    max_error_rate: float | None = Field(None, ge=0, le=1, description="Maximum share of "
                                         "errored samples (agent-eval-harness).")
    min_win_rate: float | None = Field(None, ge=0, le=1, description="Pairwise judges: "
                                       "minimum win rate of each compared condition.")
    min_mean: float | None = Field(None, description="Minimum mean value.")
    pass_score: float | None = Field(
        None, description="Numeric judges: a sample passes when its value >= this (default: "
                          "the normalised value >= 0.5).")


class ThresholdsBlock(Block):
    """``thresholds``: top-level keys apply to the composite; `judges` per judge."""

    min_pass_rate: float | None = Field(None, ge=0, le=1, description="Composite pass rate minimum.")
    min_mean: float | None = Field(None, description="Composite mean minimum.")
    pass_score: float = Field(0.5, ge=0, le=1, description="A composite >= this counts as a pass.")
    judges: dict[str, ThresholdSpec] = Field(default_factory=dict, description="Per judge.")
