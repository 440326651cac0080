"""The one composite rule (eval_harness.judges.composite.composite) and its judges-stage
caller ``combine``: they cannot differ, since ``combine`` only adapts the scores."""

from __future__ import annotations

import math

import pytest

from eval_harness.judges.composite import JudgeValue, combine, composite
from eval_harness.store.records import JudgeScore


def _b(value: bool, **kw: object) -> JudgeScore:
    return JudgeScore(value=value, kind="boolean", normalized=1.0 if value else 0.0, **kw)


def _n(norm: float, **kw: object) -> JudgeScore:
    return JudgeScore(value=norm * 4 + 1, kind="numeric", normalized=norm,
                      score_range=[1, 5], **kw)


@pytest.mark.parametrize(("scores", "expected"), [
    ({"a": _b(True), "q": _n(0.5)}, (0.75, False)),
    ({"a": _b(False, gate=True), "q": _n(0.5)}, (0.0, False)),
    ({"a": _b(True, gate=True, weight=0.0), "q": _n(0.25)}, (0.25, False)),
    ({"a": _b(False, gate=True), "q": JudgeScore(errored=True)}, (None, True)),
    ({"a": _b(True, weight=3.0), "q": _n(0.0)}, (0.75, False)),
    ({"a": JudgeScore(skipped=True), "q": _n(0.5)}, (0.5, False)),
    ({"a": _b(True, weight=0.0)}, (None, False)),
    ({}, (None, False)),
])
def test_combine_is_the_rule(scores: dict[str, JudgeScore], expected: tuple[float | None, bool]) -> None:
    assert combine(scores, ["a", "q"]) == expected
    parts = [JudgeValue(math.nan if s.normalized is None else s.normalized, s.errored, s.gate,
                        s.weight) for s in scores.values() if not s.skipped]
    value, errored = composite(parts)
    assert (None if math.isnan(value) else value, errored) == expected


def test_unnormalisable_judge_makes_it_unknown_not_zero() -> None:
    value, errored = composite([JudgeValue(1.0, False, False, 1.0),
                                JudgeValue(math.nan, False, False, 1.0)])
    assert math.isnan(value) and not errored
    # ... unless it has no weight
    assert composite([JudgeValue(1.0, False, False, 1.0),
                      JudgeValue(math.nan, False, False, 0.0)]) == (1.0, False)
