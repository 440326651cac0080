"""The ``matrix`` block (DESIGN.md contract): factors, replications, analysis options."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from eval_harness.config.ddf import ddf_method, unknown_ddf
from eval_harness.config.pass_rule import PASS_RULES
from eval_harness.config.strict_block import Block

CORRECTIONS = ("holm", "bh", "fdr_bh", "none")

METHODS = ("auto", "rm", "mixed", "lmm")
FACTOR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*\Z")
#: factor names that would collide with columns of the tidy analysis frame
RESERVED_FACTORS = frozenset(
    {"eval", "run_id", "condition_id", "replication", "case_id", "judge", "value", "kind",
     "errored", "case_status", "latency_s", "cost_usd", "tokens", "tool_calls", "case_hash",
     "normalized"}
)


class Variant(Block):
    """A named level whose ``set`` entries (dotted config paths) override the config."""

    name: StrictStr | StrictInt = Field(description="The level recorded for this variant.")
    set: dict[str, Any] = Field(description="Dotted config path -> value, e.g. runner.system.")

    @field_validator("set")
    @classmethod
    def _paths(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            raise ValueError("a variant's `set` must name at least one config path")
        for key in value:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*\Z", str(key)):
                raise ValueError(f"`{key}` is not a dotted config path such as runner.system")
            if str(key).split(".")[0] in ("matrix", "name", "extends", "judges", "dataset"):
                raise ValueError(f"a variant cannot change `{key}`")
        return value


def _check_levels(value: Any) -> Any:
    if not isinstance(value, list):
        raise ValueError(
            f"levels must be a YAML list, got {type(value).__name__} {value!r}"
        )
    if not value:
        raise ValueError("levels must be a non-empty list")
    seen: set[str] = set()
    as_text: dict[str, Any] = {}  # str(level) -> level: run dirs and reports hold text
    scalars: list[Any] = []
    for i, level in enumerate(value):
        if isinstance(level, Variant):
            key = repr(level.name)
        elif isinstance(level, dict):
            if "name" not in level or "set" not in level:
                raise ValueError(
                    f"level {i} is a mapping: a variant needs exactly `name` and `set`"
                )
            try:
                variant = Variant.model_validate(level)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise ValueError(f"level {i} (variant) {where}: {first['msg']}") from None
            value = [*value[:i], variant, *value[i + 1:]]
            key = repr(variant.name)
        elif level is None or isinstance(level, (list,)):
            raise ValueError(f"level {i} must be a scalar or a variant, got {level!r}")
        else:
            key = repr(level)
            # 1, 1.0 and true are distinct ids but equal in Python: a table grouped by
            # level would merge them, so they cannot be told apart in the analysis
            clash = next((v for v in scalars if v == level and repr(v) != key), None)
            if clash is not None:
                raise ValueError(f"levels {clash!r} and {level!r} compare equal and would be "
                                 "merged in the analysis; quote them as distinct strings")
            scalars.append(level)
        if key in seen:
            raise ValueError(f"duplicate level {key}")
        seen.add(key)
        name = level.name if isinstance(level, Variant) else (
            value[i].name if isinstance(value[i], Variant) else level)
        text = str(name)
        if text in as_text:
            raise ValueError(f"levels {as_text[text]!r} and {name!r} are the same text "
                             f"{text!r} once converted (ids, folders, reports): quote them "
                             "as distinct strings")
        as_text[text] = name
    return value


Levels = Annotated[list[Any], BeforeValidator(_check_levels),
                   WithJsonSchema({"type": "array", "minItems": 1,
                                   "description": "Non-empty list of levels (scalars or "
                                                  "variants {name, set})."})]


class PowerPrior(Block):
    """A prior for power planning when no earlier runs exist (composite scale, 0..1)."""

    case_sd: float = Field(ge=0, description="SD across cases of the true difference between two conditions (omega).")
    noise_sd: float = Field(ge=0, description="SD of one sample around its case mean (sigma).")
    target_effect: float | None = Field(None, gt=0, description="Effect to plan for (composite units).")
    power: float = Field(0.8, gt=0, lt=1, description="Target power.")


class AnalysisOptions(Block):
    """``matrix.analysis``: how the results are analysed."""

    correction: StrictStr = Field("holm", description="holm | bh | fdr_bh (alias) | none.")
    per_judge: StrictBool = Field(False, description="Also screen every judge separately.")
    method: StrictStr = Field(
        "auto", description="auto (rm when complete, else mixed) | rm (repeated measures, GG) | "
        "mixed (by-case random slopes, keeps incomplete cases) | lmm (random intercept).")
    ddf: StrictStr = Field(
        "kenward-roger", description="Denominator df of the mixed model (mixed, and auto on "
        "incomplete data): kenward-roger (default) | satterthwaite.")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level.")
    keep_incomplete: StrictBool = Field(
        False, description="lmm only: keep cases missing some cells via a fitted model."
    )
    pass_mark: float | None = Field(
        None, ge=0, le=1, description="Composite at or above which a sample passes."
    )
    pass_rule: StrictStr | None = Field(
        None, description="How a sample passes: requirements (default: every boolean judge "
        "true and the composite >= pass_mark) | composite (the composite >= pass_mark "
        "alone: the weighted-average rule) | aeh (agent-eval-harness's: every boolean judge "
        "true and the mean of the numeric judges >= pass_mark; the default for its configs).")
    power: PowerPrior | None = Field(None, description="Prior variance components for planning.")

    @field_validator("pass_rule")
    @classmethod
    def _pass_rule(cls, value: str | None) -> str | None:
        if value is None:
            return None
        low = value.lower()
        if low not in PASS_RULES:
            raise ValueError(f"unknown pass rule {value!r}; use requirements, composite or aeh")
        return low

    @field_validator("correction")
    @classmethod
    def _correction(cls, value: str) -> str:
        low = value.lower()
        if low not in CORRECTIONS:
            raise ValueError(f"unknown correction {value!r}; use one of {', '.join(CORRECTIONS)}")
        return "bh" if low == "fdr_bh" else low

    @field_validator("method")
    @classmethod
    def _method(cls, value: str) -> str:
        low = value.lower()
        if low not in METHODS:
            raise ValueError(f"unknown method {value!r}; use auto, rm, mixed or lmm")
        return low

    @field_validator("ddf")
    @classmethod
    def _ddf(cls, value: str) -> str:
        method = ddf_method(value)
        if method is None:
            raise ValueError(unknown_ddf(value))
        return method


class MatrixBlock(Block):
    """``matrix``: factors (name -> levels), replications and analysis options."""

    factors: dict[str, Levels] = Field(description="Factor name -> non-empty list of levels.")
    replications: StrictInt = Field(1, ge=1, le=1_000_000, description="Runs per (condition, case).")
    analysis: AnalysisOptions = Field(default_factory=AnalysisOptions,  # type: ignore[arg-type]
                                      description="Analysis options.")

    @field_validator("factors", mode="before")
    @classmethod
    def _factor_names(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"factors must be a mapping of name -> list, got {type(value).__name__}")
        for name in value:
            if not isinstance(name, str) or not FACTOR_NAME.match(name):
                raise ValueError(f"factor name {name!r} must start with a letter and use "
                                 "letters, digits, `_`, `-`, `.`")
            if name in RESERVED_FACTORS:
                raise ValueError(f"factor name {name!r} is reserved (a column of the analysis)")
        return value
