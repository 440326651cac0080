"""Judge values: kind inference, the range rule, sample reduction and normalisation.

A judge returns a boolean (kind ``boolean``, normalised 0/1) or a finite number (kind
``numeric``) that must lie inside its ``score_range`` [lo, hi] (default [0, 1]); the
normalised value is ``(v - lo) / (hi - lo)``. An off-scale number is an *error*, never
clamped: a judge that emits 7 on a 1-5 scale is broken, and clamping would hide it.

``samples: N`` reduces N verdicts by the median (numbers) or the majority (booleans; a tie
is ``False``, failing closed). Any errored sample errors the whole verdict.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

DEFAULT_RANGE = (0.0, 1.0)
#: the largest judge value (or score_range bound) accepted: squares of larger values
#: overflow in the sums of squares, and charts get infinite axes
MAX_ABS_VALUE = 1e150


class JudgeFailure(Exception):
    """A judge could not produce a trustworthy verdict (the sample is errored, never 0)."""


@dataclass(frozen=True)
class Outcome:
    """One raw verdict from one judge call."""

    value: Any
    rationale: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def score_range(block_range: list[float] | None) -> tuple[float, float]:
    """The declared range, or [0, 1]."""
    if block_range is None:
        return DEFAULT_RANGE
    return float(block_range[0]), float(block_range[1])


def classify(value: Any, rng: tuple[float, float]) -> tuple[str, float | bool]:
    """Return (kind, value) or raise JudgeFailure for a wrong type or an off-scale number."""
    if isinstance(value, bool):
        return "boolean", value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        if not math.isfinite(number):
            raise JudgeFailure(f"judge returned a non-finite value {value!r}")
        if abs(number) > MAX_ABS_VALUE:
            raise JudgeFailure(f"judge returned {value!r}, too large to analyse (|value| > "
                               f"{MAX_ABS_VALUE:g}); rescale the judge")
        lo, hi = rng
        if number < lo or number > hi:
            raise JudgeFailure(f"value {value!r} is outside score_range [{lo:g}, {hi:g}] "
                               "(never clamped; declare score_range if the scale differs)")
        return "numeric", number
    raise JudgeFailure(f"judge returned {type(value).__name__} {value!r}; "
                       "expected a boolean or a number")


def normalize(kind: str, value: float | bool, rng: tuple[float, float]) -> float:
    """Map to [0, 1]: booleans 0/1, numbers by their range."""
    if kind == "boolean":
        return 1.0 if value else 0.0
    lo, hi = rng
    return (float(value) - lo) / (hi - lo)


def reduce_samples(kinds_values: list[tuple[str, float | bool]]) -> tuple[str, float | bool]:
    """Median of numbers, majority of booleans (tie -> False); mixed kinds are an error."""
    kinds = {k for k, _ in kinds_values}
    if len(kinds) != 1:
        raise JudgeFailure("samples disagree on the value type (boolean vs number)")
    kind = kinds.pop()
    values = [v for _, v in kinds_values]
    if kind == "boolean":
        trues = sum(1 for v in values if v)
        return kind, trues * 2 > len(values)
    return kind, float(statistics.median(float(v) for v in values))
