"""agent-eval-harness flags and environment variables that have a counterpart here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from eval_harness.cli.args import build_parser
from eval_harness.config.loader import load_config
from eval_harness.config.template_syntax import render_arguments
from eval_harness.errors import ConfigError
from eval_harness.runner.claude_code import ClaudeCodeRunner
from eval_harness.runner.cli import CliRunner
from eval_harness.runner.contract import RunRequest
from tests.conftest import FIXTURES, run_cli


def _project(tmp_path: Path, matrix: bool = False) -> Path:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": "c1", "input": {"prompt": "hi"}}, {"id": "c2", "input": {"prompt": "yo"}}]))
    cfg = {"name": "flags", "runner": {"type": "cli", "command": "echo {model} {ctx} {prompt}"},
           "dataset": {"path": "cases.yaml"},
           "judges": [{"name": "ok", "check": "return True, ''"}]}
    if matrix:
        cfg["matrix"] = {"factors": {"ctx": ["a"]}}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "eval.yaml"


def _outputs(runs: Path) -> list[str]:
    return sorted(json.loads(p.read_text())["output"]
                  for p in runs.glob("flags/*/cases/*/outputs.json"))


def test_model_and_input_override_reach_the_command(tmp_path: Path) -> None:
    cfg = _project(tmp_path)
    runs = tmp_path / "runs"
    code, _, err = run_cli("--config", str(cfg), "--runs-dir", str(runs), "--model", "m-x",
                           "--input-override", "ctx=none", "--no-analysis", "--no-judge-check")
    assert code == 0, err
    assert _outputs(runs) == ["m-x none hi", "m-x none yo"]


def test_input_override_needs_name_value(tmp_path: Path) -> None:
    code, _, err = run_cli("--config", str(_project(tmp_path)), "--dry-run", "--model", "m",
                           "--input-override", "novalue")
    assert code == 2 and "NAME=VALUE" in err


def test_without_model_or_matrix_nothing_runs(tmp_path: Path) -> None:
    code, _, err = run_cli("--config", str(_project(tmp_path)), "--dry-run")
    assert code == 2 and "--model" in err


def test_no_report_writes_anova_json_only(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, _, err = run_cli("--analyze-only", str(FIXTURES / "aeh_sample_runs"), "--output",
                           str(out), "--no-report")
    assert code == 0, err
    assert (out / "anova.json").is_file()
    assert not (out / "report.md").exists() and not (out / "report.html").exists()


def test_agent_eval_runs_dir_is_the_default_runs_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EVAL_RUNS_DIR", "/tmp/aeh-runs")
    assert build_parser().parse_args([]).runs_dir == "/tmp/aeh-runs"
    monkeypatch.delenv("AGENT_EVAL_RUNS_DIR")
    assert build_parser().parse_args([]).runs_dir == "runs"


def test_eval_judge_model_is_the_default_judge_model(tmp_path: Path) -> None:
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("name: j\njudges:\n  - name: q\n    prompt: 'Rate {{ outputs.output }}'\n")
    assert load_config(cfg, env={"EVAL_JUDGE_MODEL": "openai:judge-x"}).config.models.judge \
        == "openai:judge-x"
    cfg.write_text(cfg.read_text() + "models: {judge: 'openai:mine'}\n")
    assert load_config(cfg, env={"EVAL_JUDGE_MODEL": "openai:judge-x"}).config.models.judge \
        == "openai:mine"


def test_arguments_placeholders_as_it_resolves_them() -> None:
    assert render_arguments("{prompt}  --id {ticket?}", {"prompt": "fix it"}) == "fix it --id"
    assert render_arguments("do {{ input.prompt }}", {"prompt": "x"}) == "do x"
    with pytest.raises(ConfigError, match="ticket"):
        render_arguments("{ticket}", {"prompt": "x"})


def _request(tmp_path: Path, cfg_text: str) -> tuple[object, RunRequest]:
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(cfg_text)
    config = load_config(cfg).config
    req = RunRequest(case_id="c1", input={"prompt": "fix the bug"}, condition_id="x", levels={},
                     replication=1, model="m1", effort=None, subagent_model=None,
                     config=config, config_dir=tmp_path, case_dir=tmp_path / "case")
    return config, req


def test_skill_mode_sends_slash_skill_with_arguments(tmp_path: Path) -> None:
    config, req = _request(tmp_path, "execution:\n  skill: rfe.create\n  arguments: '{prompt}'\n"
                                     "permissions:\n  deny: ['mcp__*']\n")
    argv = ClaudeCodeRunner(config).build_argv(req)  # type: ignore[arg-type]
    assert argv[argv.index("-p") + 1] == "/rfe.create fix the bug"
    assert argv[-2:] == ["--disallowedTools", "mcp__*"]


def test_cli_sees_agent_and_args(tmp_path: Path) -> None:
    config, req = _request(tmp_path, "name: s\nexecution:\n  skill: sk\n  arguments: '-p {prompt}'\n"
                                     "runner:\n  type: cli\n  command: run {agent} {args}\n")
    assert CliRunner(config).build_argv(req) == ["run", "sk", "-p fix the bug"]  # type: ignore[arg-type]
