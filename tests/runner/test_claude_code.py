"""The ``claude-code`` runner against a fake ``claude`` program (a real subprocess)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from runner_helpers import FIXTURES, FakeScorer, options, records, write_eval

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute

FAKE = FIXTURES / "agents" / "fake_claude.py"
COMMAND = [sys.executable, "-S", str(FAKE)]


def _eval(tmp_path: Path, *, factors: dict[str, list[Any]], runner: dict[str, Any] | None = None,
          execution: dict[str, Any] | None = None, models: dict[str, str] | None = None,
          n_cases: int = 2) -> Path:
    """The fake claude picks its behaviour from the prompt's first word (the ``mode``
    factor); the last word is the case id."""
    cfg = write_eval(tmp_path, factors=factors, n_cases=n_cases,
                     runner={"type": "claude-code", "command": COMMAND, **(runner or {})},
                     execution={"prompt": "{{ input.mode }} {{ case_id }}", **(execution or {})})
    if models:
        data = yaml.safe_load(cfg.read_text())
        data["models"] = models
        cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    return cfg


def _case(eval_dir: Path, case_id: str, label: str = "") -> Path:
    [case] = eval_dir.glob(f"*{label}*/cases/{case_id}")
    return case


def _seen(case: Path) -> dict[str, Any]:
    """What the fake claude saw (it echoes it back as its ``result``)."""
    return json.loads(json.loads((case / "outputs.json").read_text())["output"])


def test_argv_cwd_subagent_env_and_masked_command(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_TOKEN", "s3cr3t-claude")
    cfg = _eval(tmp_path, factors={"model": ["opus-x"], "effort": ["high"],
                                   "subagent": ["haiku-y"], "mode": ["echo"]},
                runner={"max_budget_usd": 0.5,
                        "extra_args": ["--permission-mode", "bypassPermissions",
                                       "--append-system-prompt", "token ${FAKE_CLAUDE_TOKEN}"]})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    recs = {r["case_id"]: r for r in records(summary.eval_dir)}
    assert sorted(recs) == ["c00", "c01"]
    for case_id, rec in recs.items():
        assert rec["status"] == "ok" and rec["exit_code"] == 0, rec
        assert rec["composite"] == 0.0  # the echo is not the expected answer, but it is judged
        assert (rec["cost_usd"], rec["tokens"], rec["input_tokens"], rec["output_tokens"],
                rec["tool_calls"]) == (0.0123, 15, 10, 5, None)
        case = _case(summary.eval_dir, case_id)
        # the agent echoed the secret back: outputs.json has it masked (eval_harness._util.redact),
        # the agent's own file in its workspace shows what it really received
        assert "s3cr3t-claude" not in (case / "outputs.json").read_text()
        seen = json.loads((case / "workspace" / "seen.txt").read_text())
        tail = ["-p", f"echo {case_id}", "--output-format", "json", "--model", "opus-x",
                "--effort", "high", "--max-budget-usd", "0.5", "--permission-mode",
                "bypassPermissions", "--append-system-prompt", "token s3cr3t-claude"]
        assert seen["argv"] == tail
        assert seen["rest"] == ["--permission-mode", "bypassPermissions",
                                "--append-system-prompt", "token s3cr3t-claude"]
        assert Path(seen["cwd"]).resolve() == (case / "workspace").resolve()
        assert (case / "workspace" / "seen.txt").is_file()  # written in the workspace
        assert seen["subagent"] == "haiku-y" and seen["case_id"] == case_id
        command = json.loads((case / "command.json").read_text())["argv"]
        assert command == [*COMMAND, *tail[:-1], "token ***"]  # the secret is masked
        assert "s3cr3t-claude" not in (case / "command.json").read_text()
        out = json.loads((case / "outputs.json").read_text())
        assert out["reply"]["session_id"] == "fake-session" and out["reply"]["type"] == "result"


def test_defaults_from_models_block_and_execution_budget(tmp_path: Path) -> None:
    # no model/effort/subagent factor: --model from models.skill, no --effort, the subagent
    # model from models.subagent, the budget from execution.max_budget_usd; a string command
    cfg = _eval(tmp_path, factors={"mode": ["echo"]}, n_cases=1,
                runner={"command": f"{sys.executable} -S {FAKE}"},
                execution={"max_budget_usd": 2}, models={"skill": "sonnet-z",
                                                         "subagent": "haiku-default"})
    summary = execute(prepare(cfg), None, options(tmp_path / "runs"))
    [rec] = records(summary.eval_dir)
    assert rec["status"] == "ok", rec
    seen = _seen(_case(summary.eval_dir, "c00"))
    assert seen["argv"] == ["-p", "echo c00", "--output-format", "json", "--model", "sonnet-z",
                            "--max-budget-usd", "2"]
    assert seen["effort"] is None and seen["subagent"] == "haiku-default"


def test_no_subagent_model_leaves_the_variable_unset(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_SUBAGENT_MODEL", raising=False)
    cfg = _eval(tmp_path, factors={"model": ["m"], "mode": ["echo"]}, n_cases=1)
    summary = execute(prepare(cfg), None, options(tmp_path / "runs"))
    seen = _seen(_case(summary.eval_dir, "c00"))
    assert seen["subagent"] is None and seen["budget"] is None
    assert seen["argv"] == ["-p", "echo c00", "--output-format", "json", "--model", "m"]


def test_answers_are_scored_and_cost_is_recorded(tmp_path: Path) -> None:
    cfg = _eval(tmp_path, factors={"model": ["a", "b"], "mode": ["reply"]}, n_cases=3)
    scorer = FakeScorer()
    summary = execute(prepare(cfg), scorer, options(tmp_path / "runs"))
    recs = records(summary.eval_dir)
    assert len(recs) == 6 and summary.ok == 6
    assert all(r["composite"] == 1.0 and r["cost_usd"] == 0.0123 for r in recs)
    assert summary.spend_usd == pytest.approx(6 * 0.0123)
    assert sorted(s.outputs["output"] for s in scorer.calls) == sorted(
        f"answer-c0{i}" for i in range(3) for _ in "ab")


def test_failures_end_errored_with_reasons(tmp_path: Path) -> None:
    cfg = _eval(tmp_path, factors={"model": ["m"],
                                   "mode": ["iserror", "errexit", "garbage", "fail", "ok"]},
                n_cases=1, execution={"retries": 2})
    scorer = FakeScorer()
    summary = execute(prepare(cfg), scorer, options(tmp_path / "runs"))
    recs = {r["levels"]["mode"]: r for r in records(summary.eval_dir)}
    assert sorted(recs) == ["errexit", "fail", "garbage", "iserror", "ok"]
    expected = {
        "iserror": "claude reported an error: error_max_budget_usd",
        # claude's own account of the failure wins over the bare exit code
        "errexit": "claude reported an error: error_during_execution (exit code 1)",
        "garbage": "malformed output: no JSON result from claude",
        "fail": "exit code 2: claude: authentication went sideways",
    }
    for mode, reason in expected.items():
        rec = recs[mode]
        assert rec["status"] == "errored" and rec["reason"] == reason, rec
        assert rec["scores"] == {} and rec["composite"] is None and rec["attempts"] == 1
    assert recs["iserror"]["cost_usd"] == 0.0123  # claude stated it: the spend is real
    assert recs["garbage"]["cost_usd"] is None and recs["garbage"]["exit_code"] == 0
    assert recs["fail"]["exit_code"] == 2 and recs["fail"]["cost_usd"] is None
    assert recs["ok"]["status"] == "ok" and recs["ok"]["composite"] == 1.0
    assert [s.levels["mode"] for s in scorer.calls] == ["ok"]  # only the ok run was judged
    garbage = _case(summary.eval_dir, "c00", "garbage")
    assert (garbage / "stdout.log").read_text() == "Error: this is not JSON at all\n"
    fail = _case(summary.eval_dir, "c00", "fail")
    assert "authentication went sideways" in (fail / "stderr.log").read_text()


def test_missing_executable_is_an_errored_cell(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-claude"
    cfg = _eval(tmp_path, factors={"model": ["m"], "mode": ["reply"]}, n_cases=1,
                runner={"command": [str(missing)]})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    [rec] = records(summary.eval_dir)
    assert rec["status"] == "errored" and rec["reason"].startswith("cannot start:")
    assert str(missing) in rec["reason"] and rec["composite"] is None


def test_runner_budget_of_zero_is_not_replaced_by_the_execution_budget(tmp_path: Path) -> None:
    cfg = _eval(tmp_path, factors={"model": ["m"], "mode": ["echo"]}, n_cases=1,
                runner={"max_budget_usd": 0}, execution={"max_budget_usd": 2})
    summary = execute(prepare(cfg), None, options(tmp_path / "runs"))
    assert _seen(_case(summary.eval_dir, "c00"))["budget"] == "0"


def test_claude_code_runs_are_cached_on_argv_and_env(tmp_path: Path) -> None:
    from dataclasses import replace

    from eval_harness.cache.store import CallCache

    cache = CallCache(tmp_path / "cache")
    cfg = _eval(tmp_path, factors={"model": ["opus-x"], "mode": ["echo"]})
    opts = replace(options(tmp_path / "a"), cache=cache)
    first = {r["case_id"]: r for r in records(execute(prepare(cfg), FakeScorer(), opts).eval_dir)}
    assert cache.counts.hits == 0 and cache.counts.lookups == 2
    summary = execute(prepare(cfg), FakeScorer(), replace(opts, runs_dir=tmp_path / "b"))
    assert cache.counts.hits == 2
    for case_id, rec in {r["case_id"]: r for r in records(summary.eval_dir)}.items():
        assert rec["cache_hit"] is True and rec["latency_s"] is None
        assert rec["cost_usd"] == first[case_id]["cost_usd"] == 0.0123
        case = _case(summary.eval_dir, case_id)
        assert _seen(case)["prompt"] == f"echo {case_id}"
        assert (case / "stdout.log").read_text().strip().startswith("{")
        assert json.loads((case / "command.json").read_text())["argv"][0] == sys.executable
    data = yaml.safe_load(cfg.read_text())
    data["execution"]["env"] = {"SOME_FLAG": "1"}  # the agent's environment is in the key
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    execute(prepare(cfg), FakeScorer(), replace(opts, runs_dir=tmp_path / "c"))
    assert cache.counts.hits == 2 and cache.counts.lookups == 6
