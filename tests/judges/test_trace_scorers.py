"""``tool_called`` and ``max_steps`` over a trace the fixture agent (a real subprocess) emits,
table-driven: each row is a spec and the verdict it must give."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eval_harness.judges.builtins import FUNCTIONS, check_spec
from eval_harness.judges.values import JudgeFailure
from eval_harness.trace.model import as_steps

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "trace_agent.py"


@pytest.fixture(scope="module")
def trace() -> list[dict[str, Any]]:
    out = subprocess.run([sys.executable, "-S", str(AGENT), "json", "c07"], capture_output=True,
                         text=True, check=True, timeout=30).stdout
    return as_steps(json.loads(out)["steps"])


def ctx(trace: Any, tool_calls: int | None = 3) -> dict[str, Any]:
    return {"outputs": {"output": "", "trace": trace, "tool_calls": tool_calls},
            "input": {"case": "c07"}, "expected": None, "tags": {}, "annotations": {}}


TOOL_CALLED = [
    ("search", True),                                          # nested under the llm step
    ({"name": "search", "args": {"query": "c07"}}, True),
    ({"name": "search", "args": {"query": "{{ input.case }}"}}, True),  # templated
    ({"name": "search", "args": {"query": "c08"}}, False),
    ({"name": "search", "args": {"api_key": "***"}}, True),    # it was masked when stored
    ({"name": "search", "args": {"headers": {"Authorization": "***"}}}, True),  # nested subset
    ({"name": "search", "args": {"query": "c07", "k": 3}}, False),  # a key it lacks
    ({"name": "lookup", "arguments": {"q": "c07"}}, True),     # the legacy form, old key name
    ({"name": "search", "times": 1}, True),
    ({"name": "search", "times": 2}, False),
    ({"name": "search", "min_times": 2}, False),
    ({"name": "delete_all", "not": True}, True),
    ({"name": "fetch", "not": True}, False),
    ({"name": "index"}, False),                                # a retrieval step, not a tool
    ("planner", False),                                        # an llm step, not a tool
]


@pytest.mark.parametrize(("spec", "verdict"), TOOL_CALLED)
def test_tool_called(trace: list[dict[str, Any]], spec: Any, verdict: bool) -> None:
    assert check_spec("tool_called", spec) is None
    outcome = FUNCTIONS["tool_called"](spec, ctx(trace))
    assert outcome.value is verdict, outcome.rationale


MAX_STEPS = [
    (5, True), (4, False),                    # 5 steps: planner, search, index, fetch, lookup
    ({"max": 3, "kind": "tool"}, True), ({"max": 2, "kind": "tool"}, False),
    ({"max": 1, "kind": "retrieval"}, True), ({"max": 0, "kind": "retrieval"}, False),
    ({"max": 0, "kind": "custom"}, True),
]


@pytest.mark.parametrize(("spec", "verdict"), MAX_STEPS)
def test_max_steps(trace: list[dict[str, Any]], spec: Any, verdict: bool) -> None:
    assert check_spec("max_steps", spec) is None
    assert FUNCTIONS["max_steps"](spec, ctx(trace)).value is verdict


@pytest.mark.parametrize("kind", ["tool_called", "max_steps"])
def test_no_trace_is_an_error_not_a_verdict(kind: str) -> None:
    spec = "search" if kind == "tool_called" else 3
    for c in (ctx(None, None), ctx([], None)):
        with pytest.raises(JudgeFailure, match="no trace"):
            FUNCTIONS[kind](spec, c)
    # an empty trace that was reported (zero tool calls) is a verdict
    assert FUNCTIONS[kind](spec, ctx([], 0)).value is (kind == "max_steps")


@pytest.mark.parametrize(("kind", "spec", "problem"), [
    ("tool_called", {"args": {}}, "needs a tool name"),
    ("tool_called", {"name": "a", "times": -1}, "integer >= 0"),
    ("tool_called", {"name": "a", "times": True}, "integer >= 0"),
    ("tool_called", {"name": "a", "not": True, "times": 1}, "excludes"),
    ("tool_called", {"name": "a", "not": "yes"}, "true or false"),
    ("max_steps", {"kind": "tool"}, "integer >= 0"),
    ("max_steps", "5", "integer >= 0"),
    ("max_steps", {"max": 2, "kind": 3}, "step kind"),
])
def test_bad_specs_are_config_errors(kind: str, spec: Any, problem: str) -> None:
    assert problem in (check_spec(kind, spec) or "")
