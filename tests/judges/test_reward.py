"""agent-eval-harness's reward composition (eval_harness.judges.reward)."""

from __future__ import annotations

import pytest

from eval_harness.judges.reward import (
    JudgeResult,
    RewardSpec,
    evaluate_formula,
    formula_names,
    parse_formula,
    reward,
)

R = JudgeResult


def test_default_rule_gates_and_averages_over_default_scale() -> None:
    # (4-1)/4 and (2-1)/4 averaged; a passing gate does not enter the mean
    assert reward({"ok": R(True), "a": R(4), "b": R(2)}, {}) == (0.5, False)
    assert reward({"ok": R(False), "a": R(5)}, {}) == (0.0, False)
    assert reward({"ok": R(True)}, {}) == (1.0, False)  # only passing gates
    assert reward({"a": R(7)}, {"a": (0.0, 10.0)}) == (0.7, False)  # declared range
    assert reward({"a": R(9)}, {}) == (1.0, False)  # clipped


def test_errors_are_left_out_and_nothing_scored_is_errored() -> None:
    assert reward({"a": R(5), "b": R(None, errored=True)}, {}) == (1.0, False)
    assert reward({"a": R(None, errored=True)}, {}) == (None, True)
    assert reward({"a": R(None)}, {}) == (1.0, False)  # skipped, not errored


def test_judge_mode_clips_or_normalises_and_does_not_gate_by_default() -> None:
    spec = RewardSpec(judge="q", gate=False)
    assert reward({"q": R(0.4), "ok": R(False)}, {}, spec) == (0.4, False)
    norm = RewardSpec(judge="q", gate=False, normalize=True)
    assert reward({"q": R(3)}, {"q": (1.0, 5.0)}, norm) == (0.5, False)
    assert reward({"q": R(None, errored=True)}, {}, norm) == (None, True)
    assert reward({"q": R(None)}, {}, norm) == (0.0, False)  # skipped judge: 0 as there


def test_weighted_formula_and_raw_judges() -> None:
    spec = RewardSpec(weights={"a": 3.0, "b": 1.0}, raw=("b",), gate=True)
    # a: (5-1)/4 = 1, b: 0.2 clipped as-is -> (3*1 + 1*0.2) / 4
    assert reward({"a": R(5), "b": R(0.2)}, {}, spec) == (pytest.approx(0.8), False)
    assert reward({"a": R(5), "b": R(0.2), "ok": R(False)}, {}, spec) == (0.0, False)
    fallback = RewardSpec(weights={"a": 1.0}, score_range=(0.0, 10.0))
    assert reward({"a": R(5)}, {}, fallback) == (0.5, False)


def test_expression_formula() -> None:
    spec = RewardSpec(formula="x = min(a, b)\nx * 0.5 + (0.5 if ok else 0)", gate=False)
    value, errored = reward({"a": R(5), "b": R(3), "ok": R(True)}, {}, spec)
    assert (value, errored) == (pytest.approx(0.25 + 0.5), False)
    assert reward({"a": R(None, errored=True), "b": R(3), "ok": R(True)}, {}, spec) == (None, True)
    assert formula_names(spec.formula) == {"a", "b", "ok"}


@pytest.mark.parametrize("bad", ["__import__('os')", "a ** 2", "'x' * 3", "open('f')",
                                 "x = 1", "a.b", "[i for i in a]", "2e9"])
def test_formula_rejects_anything_but_arithmetic(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_formula(bad)


def test_evaluator_semantics() -> None:
    assert evaluate_formula("mean([a, b])", {"a": 1.0, "b": 0.0}) == 0.5
    assert evaluate_formula("0 < a <= 1", {"a": 1.0}) is True
    assert evaluate_formula("a and b or 0.3", {"a": 1.0, "b": 0.0}) == 0.3
    with pytest.raises(ValueError, match="has no value"):
        evaluate_formula("missing + 1", {})
