"""build_scorer: every judge kind, composite rules, samples, thread safety."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import FAST, make_experiment, sample

from eval_harness.errors import ConfigError
from eval_harness.judges.scorer import JudgeScorer, build_scorer

CHECK = "ok = 'paris' in outputs['output'].lower()\nreturn ok, 'mentions Paris' if ok else 'no Paris'"


def test_offline_kinds_and_weighted_composite(tmp_path: Path) -> None:
    (tmp_path / "myjudges.py").write_text(
        "def length(outputs, expected):\n    return min(len(outputs['output']), 10), 'chars'\n")
    exp = make_experiment(tmp_path, [
        {"name": "has_paris", "check": CHECK},
        {"name": "entities", "entity_coverage": True, "weight": 2},
        {"name": "exact", "exact_match": True},
        {"name": "length", "module": "myjudges", "function": "length", "score_range": [0, 10]},
        {"name": "fast", "latency": 5},
    ])
    result = build_scorer(exp).score(sample(exp, "Paris"))
    s = result.scores
    assert s["has_paris"].value is True and s["has_paris"].kind == "boolean"
    assert s["has_paris"].rationale == "mentions Paris"
    assert s["entities"].value == 1.0 and s["entities"].score_range == [0.0, 1.0]
    assert s["exact"].value is False
    assert s["length"].value == 5.0 and s["length"].normalized == 0.5
    # (1*1 + 2*1 + 1*0 + 1*0.5 + 1*1) / 6
    assert result.composite == pytest.approx(4.5 / 6) and not result.composite_errored


def test_check_exception_errors_sample_with_last_line(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "boom", "check": "return 1 / 0, 'x'"},
                                     {"name": "fast", "latency": 5}])
    result = build_scorer(exp).score(sample(exp))
    assert result.scores["boom"].errored
    assert result.scores["boom"].error == "ZeroDivisionError: division by zero"
    assert result.composite is None and result.composite_errored
    assert result.scores["fast"].value is True


def test_a_hung_code_judge_times_out_and_does_not_pile_up(tmp_path: Path) -> None:
    """A code judge that never returns errors its sample after `timeout`. A `check` runs in
    a child process that is killed then, so its next call runs at once; a `module` judge
    runs in a thread: while that call still runs, the judge is refused at once (no second
    stuck thread); once it ends, it runs."""
    (tmp_path / "hangjudge.py").write_text(
        "import threading\nRELEASE = threading.Event()\n"
        "def judge(outputs):\n"
        "    if outputs['output'] == 'hang':\n        RELEASE.wait(30)\n"
        "    return True, 'ran'\n")
    exp = make_experiment(tmp_path, [
        # a busy loop (holds the GIL between switches), released at the end of the test
        {"name": "spin", "check": "import hangjudge\nwhile outputs['output'] == 'hang' and "
         "not hangjudge.RELEASE.is_set():\n    pass\nreturn True, 'ok'", "timeout": 0.2},
        {"name": "wait", "module": "hangjudge", "function": "judge", "timeout": 0.2},
        {"name": "fast", "latency": 5}])
    scorer = build_scorer(exp)
    first = scorer.score(sample(exp, "hang"))
    for name in ("spin", "wait"):
        assert first.scores[name].errored and first.scores[name].error == "timed out after 0.2s"
    assert first.scores["fast"].value is True and first.composite_errored
    second = scorer.score(sample(exp, "Paris"))  # the stuck thread is still running
    assert second.scores["wait"].errored
    assert "still running past its 0.2s timeout" in str(second.scores["wait"].error)
    assert second.scores["spin"].value is True  # its stuck process was killed: runs at once
    sys.modules["hangjudge"].RELEASE.set()  # both stuck calls return now
    for t in [t for t in threading.enumerate() if t.name == "code-judge-call"]:
        t.join(5)
    third = scorer.score(sample(exp, "Paris"))
    assert third.scores["wait"].value is True and third.scores["wait"].rationale == "ran"
    assert third.scores["spin"].value is True and not third.composite_errored


def test_off_scale_check_value_is_error_not_clamped(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "s", "check": "return 7, 'x'", "score_range": [1, 5]},
                                     {"name": "u", "check": "return 3, 'no range declared'"}])
    result = build_scorer(exp).score(sample(exp))
    assert result.scores["s"].errored and "outside score_range" in str(result.scores["s"].error)
    assert result.scores["u"].errored
    assert result.composite is None


def test_false_gate_zeroes_composite_and_composite_block(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [
        {"name": "safe", "check": "return 'bomb' not in outputs['output'], ''", "gate": True},
        {"name": "entities", "entity_coverage": True},
        {"name": "exact", "exact_match": True},
    ], composite={"judges": ["safe", "entities"], "weights": {"entities": 3}})
    scorer = build_scorer(exp)
    good = scorer.score(sample(exp, "Paris"))
    assert good.composite == pytest.approx(1.0)  # exact is left out of the composite
    assert good.scores["entities"].weight == 3
    bad = scorer.score(sample(exp, "Paris bomb"))
    assert bad.scores["safe"].gate and bad.composite == 0.0


def test_unknown_cost_with_cost_limit_is_errored(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "cheap", "cost": 0.1}])
    result = build_scorer(exp).score(sample(exp, cost_usd=None))
    assert result.scores["cheap"].errored and result.composite_errored


def test_llm_judge_samples_median_and_metadata(tmp_path: Path, stub: Any) -> None:
    exp = make_experiment(tmp_path, [{"name": "q", "prompt": "Rate {{ outputs.output }}",
                                      "score_range": [1, 5], "samples": 3,
                                      "model": "openai:judge-1"}])
    stub.script.extend({"verdict": {"reasoning": "r", "score": v}} for v in (1, 5, 4))
    score = JudgeScorer(exp, build_scorer(exp).cache, FAST).score(sample(exp)).scores["q"]
    assert score.value == 4.0 and score.normalized == 0.75
    extra = score.model_extra or {}
    assert extra["judge_model"] == "openai:judge-1" and extra["tokens"] == 45
    assert extra["sample_values"] == [1.0, 5.0, 4.0]


def test_llm_judge_majority_and_any_errored_sample_errors(tmp_path: Path, stub: Any) -> None:
    exp = make_experiment(tmp_path, [{"name": "ok", "prompt": "Correct? {{ outputs.output }}",
                                      "samples": 3, "model": "claude-judge"}])
    scorer = JudgeScorer(exp, build_scorer(exp).cache, FAST)
    stub.script.extend({"verdict": {"reasoning": "r", "verdict": v}} for v in (True, False, True))
    assert scorer.score(sample(exp, "a")).scores["ok"].value is True
    stub.script.extend([{"verdict": {"reasoning": "r", "verdict": True}}, {"content": "garbage"}])
    result = scorer.score(sample(exp, "b"))
    assert result.scores["ok"].errored and result.composite is None


def test_concurrent_scoring_is_consistent(tmp_path: Path, stub: Any) -> None:
    exp = make_experiment(tmp_path, [{"name": "q", "prompt": "Rate {{ outputs.output }}",
                                      "score_range": [1, 5], "model": "openai:j"},
                                     {"name": "has_paris", "check": CHECK}])
    scorer = JudgeScorer(exp, build_scorer(exp).cache, FAST)
    outs = [f"Paris {i}" for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda o: scorer.score(sample(exp, o)), outs))
    assert all(r.scores["q"].value == 1.0 and r.scores["has_paris"].value for r in results)
    assert len(stub.requests) == 24 and len(scorer.cache) == 24


def test_missing_judge_model_is_config_error(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "q", "prompt": "Rate {{ outputs.output }}"}])
    with pytest.raises(ConfigError, match="needs a model"):
        build_scorer(exp)


def test_self_judging_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    exp = make_experiment(tmp_path, [{"name": "q", "prompt": "Rate {{ outputs.output }}",
                                      "model": "openai:m1"}])
    build_scorer(exp)
    assert "also a model under test" in caplog.text
