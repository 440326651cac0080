"""Pre-flight judge checks and static judge validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from judge_helpers import FAST, make_experiment

from eval_harness.errors import ConfigError, JudgeCheckError
from eval_harness.judges.preflight import check_judge_models
from eval_harness.judges.validate import validate_judges

LLM = [{"name": "a", "prompt": "Rate {{ outputs.output }}", "score_range": [1, 5],
        "model": "openai:j1"},
       {"name": "b", "reference_correctness": True, "model": "claude-j2"},
       {"name": "c", "prompt": "Again {{ outputs.output }}", "model": "openai:j1"}]


def test_preflight_one_call_per_model(tmp_path: Path, stub: Any) -> None:
    check_judge_models(make_experiment(tmp_path, LLM), FAST)
    assert sorted(r["body"]["model"] for r in stub.requests) == ["claude-j2", "j1"]


def test_preflight_failure_carries_provider_message(tmp_path: Path, stub: Any) -> None:
    stub.script.append({"status": 404})
    with pytest.raises(JudgeCheckError, match="stub status 404") as info:
        check_judge_models(make_experiment(tmp_path, LLM), FAST)
    assert info.value.exit_code == 2


def test_validate_accepts_good_config_and_reports_lint(tmp_path: Path) -> None:
    cases = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "Paris", "entities": ["Lyon"]}}]
    exp = make_experiment(tmp_path, [{"name": "e", "entity_coverage": True},
                                     {"name": "g", "check": "return True, 'ok'", "gate": True}],
                          cases, thresholds={"min_mean": 0.5, "judges": {"e": {"min_mean": 0.5}}})
    warnings = validate_judges(exp)
    assert any(w.startswith("dataset: case c1: entity 'Lyon'") for w in warnings)
    assert not any("timeout" in w for w in warnings)


def test_timeout_on_a_non_code_judge_is_warned(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "e", "entity_coverage": True, "timeout": 5},
                                     {"name": "g", "check": "return True, 'ok'", "timeout": 5}])
    warnings = [w for w in validate_judges(exp) if "timeout" in w]
    assert warnings == ["judge `e`: `timeout` applies to code judges (check, module) only; "
                        "it is ignored here"]


@pytest.mark.parametrize(("judges", "extra", "match"), [
    ([{"name": "r", "regex": "("}], {}, "bad regex"),
    ([{"name": "l", "latency": "fast"}], {}, "latency"),
    ([{"name": "e", "entity_coverage": True, "gate": True}], {}, "gate"),
    ([{"name": "e", "entity_coverage": True}], {"composite": {"gates": ["nope"]}}, "unknown judge"),
    ([{"name": "e", "entity_coverage": True}], {"thresholds": {"judges": {"x": {"min_mean": 1}}}},
     "unknown judge"),
    ([{"name": "m", "module": "no_such_module_here", "function": "f"}], {}, "cannot import"),
    ([{"name": "p", "pairwise": {"bogus": 1}, "model": "openai:j"}], {}, "pairwise option"),
])
def test_validate_rejects(tmp_path: Path, judges: list[dict[str, Any]], extra: dict[str, Any],
                          match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        validate_judges(make_experiment(tmp_path, judges, **extra))


def test_one_kind_per_judge(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="one kind per judge"):
        make_experiment(tmp_path, [{"name": "x", "check": "return 1, ''", "regex": "a"}])
