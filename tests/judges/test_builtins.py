"""Deterministic built-ins, offline."""

from __future__ import annotations

from typing import Any

import pytest

from eval_harness.judges.builtins import FUNCTIONS, check_spec
from eval_harness.judges.values import JudgeFailure


def ctx(output: str = "", expected: Any = None, tags: dict[str, Any] | None = None,
        **outputs: Any) -> dict[str, Any]:
    outs = {"output": output, "latency_s": None, "cost_usd": None, "tool_calls": None,
            "trace": []}
    outs.update(outputs)
    return {"outputs": outs, "input": {"q": "x", "city": "Paris"}, "expected": expected,
            "tags": tags or {}, "annotations": {}}


def run(kind: str, spec: Any, c: dict[str, Any]) -> Any:
    return FUNCTIONS[kind](spec, c).value


def test_exact_match_normalisation() -> None:
    c = ctx("  paris\n", "Paris")
    assert run("exact_match", True, c) is True
    assert run("exact_match", {"case_sensitive": True}, c) is False
    assert run("exact_match", {"strip_punctuation": True}, ctx("Paris!", {"answer": "paris"})) is True
    assert run("exact_match", True, ctx("Paris!", "paris")) is False
    with pytest.raises(JudgeFailure):
        run("exact_match", True, ctx("x", None))


def test_contains_regex_templates() -> None:
    c = ctx("The capital is PARIS.", {"answer": "Paris"})
    assert run("contains", "paris", c) is True
    assert run("contains", {"all": ["{{ expected.answer }}"], "case_sensitive": True}, c) is False
    assert run("contains", {"any": ["Lyon", "{{ input.city }}"]}, c) is True
    assert run("regex", {"pattern": r"capital\s+is", "flags": "i"}, c) is True
    assert run("regex", {"pattern": "Lyon", "must_match": False}, c) is True


def test_entity_coverage_folds_case_and_diacritics() -> None:
    expected = {"answer": "Zoë Müller met Paris officials", "entities": ["Zoë Müller", "Paris", "Lyon"]}
    c = ctx("zoe muller was in paris", expected)
    assert run("entity_coverage", True, c) == pytest.approx(2 / 3)
    assert run("entity_coverage", {"ignore_diacritics": False}, c) == pytest.approx(1 / 3)
    assert run("entity_coverage", True, ctx("x", {"answer": "none", "entities": [], "absent": True})) == 1.0
    with pytest.raises(JudgeFailure):
        run("entity_coverage", True, ctx("x", "plain"))


def test_tool_calls_budgets_by_tier_and_unknown_count() -> None:
    assert run("tool_calls", 3, ctx(tool_calls=3)) is True
    assert run("tool_calls", {"max": 2}, ctx(tool_calls=3)) is False
    budget = {"budget": {"simple": 3, "medium": 7}, "tag": "tier"}
    assert run("tool_calls", budget, ctx(tool_calls=5, tags={"tier": "medium"})) is True
    assert run("tool_calls", {"simple": 3, "medium": 7}, ctx(tool_calls=5, tags={"tier": "simple"})) is False
    with pytest.raises(JudgeFailure):
        run("tool_calls", 3, ctx())  # no trace: unknown is not a pass
    with pytest.raises(JudgeFailure):
        run("tool_calls", budget, ctx(tool_calls=1, tags={"tier": "hard"}))


def test_tool_called_with_arguments() -> None:
    trace = [{"tool": "search", "arguments": {"query": "Paris", "k": 3}}, {"tool": "open", "arguments": {}}]
    c = ctx(tool_calls=2, trace=trace)
    assert run("tool_called", "open", c) is True
    assert run("tool_called", {"name": "search", "arguments": {"query": "{{ input.city }}"}}, c) is True
    assert run("tool_called", {"name": "search", "arguments": {"query": "Lyon"}}, c) is False
    assert run("tool_called", {"name": "search", "min_times": 2}, c) is False
    assert run("tool_called", "search", ctx(tool_calls=0)) is False
    with pytest.raises(JudgeFailure):
        run("tool_called", "search", ctx())


def test_latency_and_cost_limits_unknown_is_error() -> None:
    assert run("latency", 2, ctx(latency_s=1.5)) is True
    assert run("latency", {"max": 1}, ctx(latency_s=1.5)) is False
    assert run("cost", 0.01, ctx(cost_usd=0.02)) is False
    with pytest.raises(JudgeFailure):
        run("cost", 0.01, ctx())


def test_json_schema() -> None:
    schema = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}
    assert run("json_schema", schema, ctx('{"city": "Paris"}')) is True
    assert run("json_schema", schema, ctx('```json\n{"city": "Paris"}\n```')) is True
    assert run("json_schema", schema, ctx('{"town": "Paris"}')) is False
    assert run("json_schema", schema, ctx("Paris")) is False


def test_static_spec_checks() -> None:
    assert check_spec("latency", "fast") is not None
    assert check_spec("regex", "(") is not None
    assert check_spec("json_schema", {"type": 12}) is not None
    assert check_spec("tool_calls", True) is not None
    assert check_spec("latency", {"max": 3}) is None
