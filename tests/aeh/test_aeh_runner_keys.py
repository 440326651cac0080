"""agent-eval-harness runner keys reach a real (fake) claude process, hooks run for real,
and case files are staged into the workspace."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_harness.errors import UsageError
from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute
from tests.runner.runner_helpers import FIXTURES, FakeScorer, options, records, write_eval

FAKE = FIXTURES / "agents" / "fake_claude.py"
COMMAND = [sys.executable, "-S", str(FAKE)]


def _seen(case: Path) -> dict[str, Any]:
    return json.loads(json.loads((case / "outputs.json").read_text())["output"])


def _claude_eval(tmp_path: Path, runner: dict[str, Any], extra: dict[str, Any] | None = None,
                 factors: dict[str, Any] | None = None) -> Path:
    cfg = write_eval(tmp_path, factors=factors or {"model": ["m1"], "mode": ["echo"]},
                     n_cases=1, runner={"type": "claude-code", "command": COMMAND, **runner},
                     execution={"prompt": "{{ input.mode }} {{ case_id }}"})
    if extra:
        data = yaml.safe_load(cfg.read_text())
        data.update(extra)
        cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    return cfg


def test_runner_keys_become_claude_flags_and_files(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = tmp_path / "plugins" / "helper" / ".claude-plugin"
    plugin.mkdir(parents=True)
    (plugin / "plugin.json").write_text('{"name": "helper"}')
    monkeypatch.chdir(tmp_path)
    cfg = _claude_eval(tmp_path, {
        "effort": "high", "system_prompt": "Be brief.", "permission_mode": "acceptEdits",
        "plugin_dirs": ["plugins/helper"], "settings": {"env": {"FOO": "1"}},
        "workspace_mode": "repo"}, extra={"permissions": {
            "allow": ["Read"], "deny": [{"path": "eval/", "tools": ["Read", "Bash"]},
                                        {"path": "eval.yaml", "tools": ["Edit"]}, "mcp__*"]}})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    [rec] = records(summary.eval_dir)
    assert rec["status"] == "ok", rec
    [case] = summary.eval_dir.glob("*/cases/c00")
    seen = _seen(case)
    assert seen["effort"] == "high"  # runner.effort: the condition has no effort factor
    rest = seen["rest"]

    def after(flag: str, n: int = 1) -> list[str]:
        i = rest.index(flag)
        return rest[i + 1:i + 1 + n]

    assert after("--append-system-prompt") == ["Be brief."]
    assert after("--permission-mode") == ["acceptEdits"]
    assert after("--allowedTools") == ["Read"]
    # path rules compiled to Claude Code patterns (a Bash deny also denies Read/Edit there)
    assert after("--disallowedTools", 4) == ["Read(eval/**)", "Edit(eval/**)",
                                             "Edit(eval.yaml)", "mcp__*"]
    staged = Path(after("--plugin-dir")[0])
    assert staged == case / "workspace" / ".staged-plugins" / "helper"
    assert (staged / ".claude-plugin" / "plugin.json").is_file()
    settings = json.loads(Path(after("--settings")[0]).read_text())
    assert settings["env"] == {"FOO": "1"}
    root = str(tmp_path.resolve())
    assert settings["permissions"]["additionalDirectories"] == [root]
    # the runs dir is inside the repository: each entry beside the workspace's path is
    # denied in the grammar claude enforces (`Edit(//abs)`), plus the write-guard hook
    deny = settings["permissions"]["deny"]
    assert f"Edit(/{root}/eval.yaml)" in deny and f"Edit(/{root}/plugins)" in deny
    assert not any(r.startswith("Write(") or r == f"Edit(/{root}/runs)" for r in deny)
    [hook] = settings["hooks"]["PreToolUse"]
    assert hook["matcher"] == "Write|Edit|MultiEdit|NotebookEdit"
    outputs = json.loads((case / "outputs.json").read_text())
    assert not any(p.startswith(".staged-plugins") for p in outputs["modified_files"])


def test_repo_write_rules_in_the_grammar_claude_enforces(tmp_path: Path) -> None:
    """`//abs` paths and `Edit` rules (tests/runner/test_claude_code_real.py proves them with
    the real CLI): the whole repository when the workspace is elsewhere, else each entry
    beside the path down to the workspace; the guard hook gets both folders."""
    from eval_harness.config.runner_model import RunnerBlock
    from eval_harness.runner.claude_settings import REPO_GUARD, settings_document

    repo, elsewhere = tmp_path / "repo", tmp_path / "runs" / "c" / "workspace"
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("x")
    runner = RunnerBlock(type="claude-code", workspace_mode="repo")
    doc = settings_document(runner, repo, elsewhere)
    root = str(repo.resolve())
    assert doc["permissions"]["deny"][0] == f"Edit(/{root}/**)"
    inner = repo / "runs" / "e" / "cases" / "c1" / "workspace"
    inner.mkdir(parents=True)
    (repo / "runs" / "old-eval").mkdir()
    deny = settings_document(runner, repo, inner)["permissions"]["deny"]
    edits = [r for r in deny if r.startswith("Edit(")]
    assert edits == [f"Edit(/{root}/README.md)", f"Edit(/{root}/src)",
                     f"Edit(/{root}/runs/old-eval)"]
    assert any(r.startswith("Bash(git commit") for r in deny)
    [hook] = doc["hooks"]["PreToolUse"][0]["hooks"]
    assert REPO_GUARD in hook["command"] and root in hook["command"]


def test_effort_factor_wins_over_runner_effort(tmp_path: Path) -> None:
    cfg = _claude_eval(tmp_path, {"effort": "high"},
                       factors={"model": ["m1"], "effort": ["low"], "mode": ["echo"]})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    [case] = summary.eval_dir.glob("*/cases/c00")
    assert _seen(case)["effort"] == "low"


def _cli_eval(tmp_path: Path, hooks: dict[str, Any]) -> Path:
    cases = tmp_path / "cases"
    for cid in ("a", "b"):
        (cases / cid / "fixtures").mkdir(parents=True)
        (cases / cid / "input.yaml").write_text(f"prompt: p-{cid}\n")
        (cases / cid / "fixtures" / "data.txt").write_text(f"data {cid}\n")
    script = tmp_path / "agent.sh"
    script.write_text('cat "$1/fixtures/data.txt"; cat "$1/marker" 2>/dev/null; echo\n')
    cfg = {"name": "hooked", "runner": {"type": "cli", "command": f"bash {script} {{workspace}}"},
           "dataset": {"path": "cases", "workspace": {"files": ["fixtures", "absent.txt"]}},
           "models": {"skill": "m"}, "execution": {"retries": 0, "parallelism": 1},
           "hooks": hooks,
           "judges": [{"name": "seen", "check": "return 'data' in outputs['output'], 'x'"}]}
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path



def _run_scored(cfg: Path, runs: Path, **opts: Any) -> Any:
    """Run `cfg` into `runs` with its real judges; the run summary."""
    from eval_harness.judges.scorer import build_scorer

    exp = prepare(cfg)
    return execute(exp, build_scorer(exp, runs_dir=runs), options(runs, **opts))

def test_hooks_run_with_its_environment_and_case_files_are_staged(tmp_path: Path) -> None:
    log = tmp_path / "hooks.log"
    hooks = {
        "before_all": [{"command": f"echo before_all $AGENT_EVAL_RUN_ID >> {log}"}],
        "before_each": [{"command": f"echo mark-$CASE_ID > $CASE_WORKSPACE/marker; "
                                    f"echo before_each $CASE_ID $AGENT_EVAL_MODEL >> {log}"}],
        "after_each": [{"command": f"echo after_each $CASE_ID >> {log}; exit 3"}],
        "before_scoring": [{"command": f"test -f $CASE_INPUT && echo scoring $CASE_ID >> {log}"}],
        "after_all": [{"command": f"echo after_all >> {log}"}],
    }
    summary = _run_scored(_cli_eval(tmp_path, hooks), tmp_path / "runs", concurrency=1)
    recs = {r["case_id"]: r for r in records(summary.eval_dir)}
    assert all(r["status"] == "ok" for r in recs.values()), recs
    for cid, rec in recs.items():
        assert rec["scores"]["seen"]["value"] is True
        [case] = summary.eval_dir.glob(f"*/cases/{cid}")
        out = json.loads((case / "outputs.json").read_text())["output"]
        assert f"data {cid}" in out and f"mark-{cid}" in out  # staged file; before_each ran
    lines = log.read_text().splitlines()
    assert lines[0] == "before_all hooked" and lines[-1] == "after_all"
    for cid in ("a", "b"):
        i = lines.index(f"before_each {cid} m")
        assert lines[i + 1:i + 3] == [f"after_each {cid}", f"scoring {cid}"]
    assert (summary.eval_dir / "hooks" / "before_each.a.0.log").is_file()


def test_failing_hooks(tmp_path: Path) -> None:
    failing = {"before_each": [{"command": "test $CASE_ID != b"}]}
    summary = _run_scored(_cli_eval(tmp_path, failing), tmp_path / "runs")
    recs = {r["case_id"]: r for r in records(summary.eval_dir)}
    assert recs["a"]["status"] == "ok"
    assert recs["b"]["status"] == "errored" and "before_each hook" in recs["b"]["reason"]
    other = tmp_path / "other"
    other.mkdir()
    exp = prepare(_cli_eval(other, {"before_all": [{"command": "exit 4", "description": "setup"}]}))
    with pytest.raises(UsageError, match="before_all hook `setup` failed: exit code 4"):
        execute(exp, FakeScorer(), options(other / "runs"))
    assert not list((other / "runs").glob("*/*/cases"))  # nothing ran


def _steps_eval(tmp_path: Path, steps: list[dict[str, Any]]) -> Path:
    cfg = write_eval(tmp_path, factors={"model": ["m1"]}, n_cases=2,
                     runner={"type": "claude-code", "command": COMMAND},
                     execution={"steps": steps})
    data = yaml.safe_load(cfg.read_text())
    data["judges"] = [
        {"name": "first_ran", "step": "plan", "check": "return 'plan' in outputs['output'], ''"},
        {"name": "final", "check": "return outputs['output'].startswith('answer-'), ''"}]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    return cfg


def test_steps_run_in_order_in_one_workspace_with_step_judges(tmp_path: Path) -> None:
    steps = [{"id": "plan", "prompt": "echo plan {{ case_id }}"},
             {"id": "act", "prompt": "do {{ case_id }}"}]
    summary = _run_scored(_steps_eval(tmp_path, steps), tmp_path / "runs")
    for rec in records(summary.eval_dir):
        assert rec["status"] == "ok", rec
        assert rec["scores"]["first_ran"]["value"] is True  # judged on step `plan` only
        assert rec["scores"]["final"]["value"] is True  # the last step's answer
        assert rec["cost_usd"] == pytest.approx(2 * 0.0123) and rec["tokens"] == 30
        [case] = summary.eval_dir.glob(f"*/cases/{rec['case_id']}")
        steps = json.loads((case / "outputs.json").read_text())["steps"]
        assert list(steps) == ["plan", "act"]
        seen = json.loads(steps["plan"]["output"])
        assert Path(seen["cwd"]) == case / "workspace"  # the shared workspace
        assert (case / "workspace" / "seen.txt").is_file()  # step 1's file stays for step 2
        assert (case / "steps" / "plan" / "stdout.log").is_file()


def test_a_failed_step_stops_the_pipeline_or_continues(tmp_path: Path) -> None:
    steps = [{"id": "plan", "prompt": "fail {{ case_id }}"},
             {"id": "act", "prompt": "do {{ case_id }}"}]
    summary = _run_scored(_steps_eval(tmp_path, steps), tmp_path / "runs")
    for rec in records(summary.eval_dir):
        assert rec["status"] == "errored" and rec["reason"].startswith("step plan:"), rec
    other = tmp_path / "other"
    other.mkdir()
    steps[0] = {**steps[0], "on_failure": "continue"}
    summary = _run_scored(_steps_eval(other, steps), other / "runs")
    for rec in records(summary.eval_dir):
        assert rec["status"] == "ok", rec
        assert rec["scores"]["final"]["value"] is True
        assert rec["scores"]["first_ran"]["value"] is False  # judged on the failed step


def test_step_rules_are_checked_at_load(tmp_path: Path) -> None:
    from eval_harness.errors import ConfigError

    for steps, match in (([{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}], "unique"),
                         ([{"id": "a", "skill": "s", "prompt": "x"}], "exactly one"),
                         ([{"id": "../a", "prompt": "x"}], "plain folder name")):
        with pytest.raises(ConfigError, match=match):
            prepare(_steps_eval(tmp_path, steps))
