"""Value rules: type, range (never clamped), normalisation, sample reduction."""

from __future__ import annotations

import math

import pytest

from eval_harness.judges.values import JudgeFailure, classify, normalize, reduce_samples


def test_boolean_and_numeric_kinds() -> None:
    assert classify(True, (0, 1)) == ("boolean", True)
    assert classify(3, (1, 5)) == ("numeric", 3.0)
    assert normalize("numeric", 3.0, (1, 5)) == 0.5
    assert normalize("boolean", False, (1, 5)) == 0.0


@pytest.mark.parametrize("bad", [6, 0.99, math.nan, math.inf, "5", None, [1]])
def test_off_scale_or_wrong_type_is_an_error_never_clamped(bad: object) -> None:
    with pytest.raises(JudgeFailure):
        classify(bad, (1.0, 5.0))


def test_median_and_majority() -> None:
    assert reduce_samples([("numeric", 1.0), ("numeric", 5.0), ("numeric", 4.0)]) == ("numeric", 4.0)
    assert reduce_samples([("boolean", True), ("boolean", False), ("boolean", True)]) == (
        "boolean", True)
    # an even split fails closed
    assert reduce_samples([("boolean", True), ("boolean", False)]) == ("boolean", False)
    with pytest.raises(JudgeFailure):
        reduce_samples([("boolean", True), ("numeric", 1.0)])
