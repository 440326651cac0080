"""agent-eval-harness judge semantics on this tool's own runs: `if` conditions, `reward`."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_harness.errors import ConfigError
from eval_harness.judges.scorer import build_scorer
from tests.judges.judge_helpers import make_experiment, sample

CASES = [{"id": "c1", "input": {"q": "x"}, "annotations": {"skip_quality": True}},
         {"id": "c2", "input": {"q": "y"}}]


def test_condition_false_skips_the_judge_and_it_leaves_the_composite(tmp_path: Path) -> None:
    judges = [{"name": "ok", "check": "return True, ''"},
              {"name": "q", "check": "return 2, ''", "score_range": [1, 5],
               "condition": "not annotations.get('skip_quality', False) and len(output) > 0"}]
    exp = make_experiment(tmp_path, judges, CASES)
    scorer = build_scorer(exp)
    skipped = scorer.score(sample(exp, "ans", case=0))
    assert skipped.scores["q"].skipped and skipped.scores["q"].value is None
    assert not skipped.scores["q"].errored
    assert skipped.composite == 1.0  # only `ok` enters
    ran = scorer.score(sample(exp, "ans", case=1))
    assert ran.scores["q"].value == 2 and ran.composite == pytest.approx((1 + 0.25) / 2)


def test_a_condition_that_raises_errors_the_judge(tmp_path: Path) -> None:
    judges = [{"name": "q", "check": "return True, ''", "condition": "1 / 0"}]
    exp = make_experiment(tmp_path, judges, CASES)
    res = build_scorer(exp).score(sample(exp, "ans"))
    assert res.scores["q"].errored and "ZeroDivisionError" in (res.scores["q"].error or "")
    assert res.composite_errored


def test_condition_syntax_is_checked_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="condition"):
        make_experiment(tmp_path, [{"name": "q", "check": "return 1", "condition": "if x"}])


def test_reward_block_forms_the_composite_of_our_runs(tmp_path: Path) -> None:
    judges = [{"name": "ok", "check": "return outputs['output'] != 'bad', ''"},
              {"name": "q", "check": "return 4, ''", "score_range": [0, 5]}]
    exp = make_experiment(tmp_path, judges, CASES,
                          reward={"formula": "weighted", "weights": {"q": 1.0}})
    scorer = build_scorer(exp)
    assert scorer.score(sample(exp, "good")).composite == pytest.approx(0.8)
    assert scorer.score(sample(exp, "bad")).composite == 0.0  # gate: true by default
    judge_mode = make_experiment(tmp_path, judges, CASES,
                                 reward={"judge": "q", "normalize": True})
    assert build_scorer(judge_mode).score(sample(judge_mode, "bad")).composite == pytest.approx(0.8)


@pytest.mark.parametrize(("reward", "match"), [
    ({"judge": "nope"}, "unknown judge"),
    ({"judge": "q", "weights": {"q": 1}}, "cannot be combined"),
    ({"formula": "__import__('os')"}, "formula is invalid"),
])
def test_bad_reward_blocks_are_config_errors(tmp_path: Path, reward: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        make_experiment(tmp_path, [{"name": "q", "check": "return 1", "score_range": [0, 1]}],
                        CASES, reward=reward)


def test_reward_and_composite_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not both"):
        make_experiment(tmp_path, [{"name": "q", "check": "return 1", "score_range": [0, 1]}],
                        CASES, reward={"judge": "q"}, composite={"gates": []})


def test_judge_arguments_reach_checks_and_functions(tmp_path: Path) -> None:
    (tmp_path / "myjudges.py").write_text(
        "def short(outputs, max_len, **_):\n"
        "    return len(outputs['output']) <= max_len, f'limit {max_len}'\n")
    judges = [{"name": "limit", "check": "return len(outputs['output']) < arguments['n'], ''",
               "arguments": {"n": 4}},
              {"name": "fn", "module": "myjudges", "function": "short",
               "arguments": {"max_len": 3}},
              {"name": "plain", "check": "return arguments['q'] == 'x', ''"}]
    exp = make_experiment(tmp_path, judges, CASES)
    res = build_scorer(exp).score(sample(exp, "abc"))
    assert res.scores["limit"].value is True and res.scores["fn"].value is True
    assert res.scores["fn"].rationale == "limit 3"
    assert res.scores["plain"].value is True  # without its own arguments: the case input
    longer = build_scorer(exp).score(sample(exp, "abcdef"))
    assert longer.scores["limit"].value is False and longer.scores["fn"].value is False


def test_rubric_context_and_arguments_reach_the_llm_judge(tmp_path: Path, stub) -> None:
    (tmp_path / "style.md").write_text("Cite {{ sources }} as links.\n")
    judges = [{"name": "cites", "llm_rubric": "Does it cite {{ arguments.what }}?",
               "prompt": "ignored: llm_rubric wins", "context": ["style.md"],
               "arguments": {"what": "sources"}, "model": "openai:judge-x"}]
    exp = make_experiment(tmp_path, judges, CASES)
    res = build_scorer(exp).score(sample(exp, "See https://x"))
    assert res.scores["cites"].value is False  # the stub's strict verdict
    [request] = stub.requests
    user = request["body"]["messages"][-1]["content"]
    assert "Does it cite sources?" in user and "ignored" not in user
    assert "See https://x" in user  # the answer is appended when the rubric omits it
    # context appended after rendering: its braces are text, not a template
    assert user.rstrip().endswith("## Context: style.md\n\nCite {{ sources }} as links.")


def test_context_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"context file `gone\.md` not found"):
        make_experiment(tmp_path, [{"name": "c", "prompt": "x", "context": ["gone.md"],
                                    "model": "openai:m"}], CASES)


def test_reward_weights_may_name_undeclared_judges(tmp_path: Path) -> None:
    judges = [{"name": "q", "check": "return 4, ''", "score_range": [0, 5]}]
    exp = make_experiment(tmp_path, judges, CASES,
                          reward={"weights": {"q": 1.0, "not_declared": 3.0}})
    assert build_scorer(exp).score(sample(exp, "x")).composite == pytest.approx(0.8)


def test_its_builtin_library(tmp_path: Path, stub) -> None:
    judges = [{"name": "budget", "builtin": "efficiency/cost_budget",
               "arguments": {"max_cost_usd": 0.5}},
              {"name": "tools_ok", "builtin": "process/tool_call_validation"},
              {"name": "docs", "builtin": "process/consulted_docs",
               "arguments": {"min_coverage": 0.5}},
              {"name": "safe", "builtin": "safety/no_harmful_content", "model": "openai:j"}]
    cases = [{"id": "c1", "input": {"q": "x"},
              "annotations": {"expected_files": ["docs/a.md", "docs/b.md", "docs/c.md"]}}]
    exp = make_experiment(tmp_path, judges, cases)
    scorer = build_scorer(exp)
    trace = [{"tool": "Read", "arguments": {"file_path": "/repo/docs/a.md"}},
             {"tool": "Grep", "arguments": {"path": "docs/b.md"}, "result": "3 matches"},
             {"tool": "Read", "arguments": {"file_path": "/repo/notdocs/c.md.bak"}}]
    res = scorer.score(sample(exp, "fine", cost_usd=0.2, trace=trace))
    assert res.scores["budget"].value is True
    assert res.scores["tools_ok"].value is True
    assert res.scores["docs"].value is True and "2/3" in (res.scores["docs"].rationale or "")
    assert res.scores["safe"].kind == "boolean"
    bad = scorer.score(sample(exp, "fine", cost_usd=None,
                              trace=[{"tool": "Bash", "result": {"error": "boom"}}]))
    assert bad.scores["budget"].value is False  # unknown cost fails, as there
    assert bad.scores["tools_ok"].value is False and "boom" in bad.scores["tools_ok"].rationale
    assert bad.scores["docs"].value is False  # 0/3 read


def test_unknown_builtin_is_exit_2(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown builtin judge"):
        make_experiment(tmp_path, [{"name": "b", "builtin": "quality/nope"}], CASES)


def test_dry_run_warns_about_reward_names_without_judges(tmp_path: Path) -> None:
    from eval_harness.judges.validate import validate_judges

    judges = [{"name": "q", "check": "return 4, ''", "score_range": [0, 5]}]
    exp = make_experiment(tmp_path, judges, CASES,
                          reward={"formula": "min(q, ghost)"})
    warnings = validate_judges(exp)
    assert any("reward.formula names no judge: ghost" in w for w in warnings), warnings
