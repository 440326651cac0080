"""agent-eval-harness eval.yaml files load as written (or are refused by name, exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_harness.config.loader import load_config
from tests.conftest import FIXTURES, run_cli

AEH = FIXTURES / "aeh_configs"
SHAPES = ["suite-shape", "harbor-shape", "root-shape", "anova-shape"]


@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_passes_dry_run(shape: str) -> None:
    code, out, err = run_cli("--config", str(AEH / f"{shape}.yaml"), "--dry-run",
                             "--no-judge-check")
    assert code == 0, err
    assert "valid: nothing was run" in out + err


def test_name_is_derived_as_it_does(tmp_path: Path) -> None:
    assert load_config(AEH / "suite-shape.yaml").config.name == "fixskill"  # the skill
    nested = tmp_path / "eval" / "user-guides"
    nested.mkdir(parents=True)
    (nested / "eval.yaml").write_text("execution: {prompt: '{{ input.q }}'}\n")
    assert load_config(nested / "eval.yaml").config.name == "user-guides"
    (tmp_path / "eval.yaml").write_text("description: root\n")
    assert load_config(tmp_path / "eval.yaml").config.name == "eval"
    (tmp_path / "eval" / "flat-one.yaml").write_text("description: flat\n")
    assert load_config(tmp_path / "eval" / "flat-one.yaml").config.name == "flat-one"


def test_keys_are_given_their_meaning() -> None:
    cfg = load_config(AEH / "harbor-shape.yaml").config
    assert cfg.runner is not None and cfg.runner.type == "claude-code"
    assert cfg.runner.allowed_tools == ["Read", "Write", "Edit"]
    assert cfg.runner.disallowed_tools == ["mcp__*"]
    assert cfg.outputs.paths == ["artifacts"]
    assert isinstance(cfg.dataset.schema_, str) if cfg.dataset else False
    quality = next(j for j in cfg.judges if j.name == "quality")
    assert quality.score_range == [1, 5] and quality.feedback_type == "int"
    assert cfg.thresholds is not None
    assert cfg.thresholds.judges["changed_something"].min_pass_rate == 0.8
    assert cfg.thresholds.judges["quality"].min_mean == 3.0
    root = load_config(AEH / "root-shape.yaml", env={"AEH_TEST_TOKEN": "s3cret"})
    judge = next(j for j in root.config.judges if j.name == "output_quality")
    assert judge.condition == "not annotations.get('skip_quality', False)"


def test_dollar_var_env_resolved_in_memory_and_omitted_when_unset() -> None:
    loaded = load_config(AEH / "root-shape.yaml", env={"AEH_TEST_TOKEN": "s3cret"})
    env = loaded.config.execution.env
    assert env["SERVICE_TOKEN"] == "s3cret" and "ABSENT_TOKEN" not in env
    assert env["SERVICE_URL"] == "http://localhost:9"
    assert "s3cret" not in str(loaded.raw)  # the stored config keeps the reference


def test_no_matrix_runs_one_condition_of_models_skill() -> None:
    code, out, err = run_cli("--config", str(AEH / "root-shape.yaml"), "--dry-run",
                             "--no-judge-check")
    assert code == 0, err
    assert "1 conditions × 2 cases" in out + err and "model-a" in out + err


REFUSED = [
    ("execution:\n  mode: batch\n", "execution.mode: batch"),
    ("execution:\n  steps:\n    - id: a\n      prompt: x\n      runner: {type: codex}\n",
     "execution.steps[].runner"),
    ("runner:\n  type: codex\n", "runner.type"),
    ("models:\n  providers: {openrouter: {kind: openrouter}}\n", "models.providers"),
    ("inputs:\n  tools:\n    - match: questions\n", "inputs.tools"),
    ("hooks:\n  before_step:\n    - command: echo\n", "hooks.before_step"),
    ("judges:\n  - name: b\n    check: 'return True, \"\"'\n    agent: {allowed_tools: [Read]}\n",
     "judges[].agent"),
    ("outputs:\n  - tool: mcp__jira__create\n    schema: x\n", "outputs[].tool"),
]


@pytest.mark.parametrize(("snippet", "key"), REFUSED, ids=[k for _, k in REFUSED])
def test_unsupported_keys_exit_2_naming_the_key(tmp_path: Path, snippet: str, key: str) -> None:
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("name: x\n" + snippet)
    code, _, err = run_cli("--config", str(cfg), "--dry-run")
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert key in line and "not supported" in line and "migrating-from-agent-eval-harness" in line


def test_refusals_are_listed_in_the_migration_doc() -> None:
    from eval_harness.aeh.dialect import UNSUPPORTED

    doc = (Path(__file__).resolve().parents[2] / "docs" / "migrating-from-agent-eval-harness.md").read_text()
    missing = [k for k in UNSUPPORTED if f"`{k.split(':')[0].strip()}" not in doc]
    assert not missing, missing


def _load(tmp_path: Path, text: str, name: str = "eval.yaml", env: dict | None = None):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return load_config(path, env=env or {}).config


def test_eval_name_is_its_eval_name(tmp_path: Path) -> None:
    # the skill wins over name; the name is sanitised as it does; name == stem is ignored
    assert _load(tmp_path, "name: x\nexecution: {skill: rfe.create}\n").name == "rfe.create"
    assert _load(tmp_path, "name: \"My Team's Eval (v2)\"\n").name == "my-teams-eval-v2"
    assert _load(tmp_path, "name: flat\n", "eval/flat.yaml").name == "flat"
    assert _load(tmp_path, "name: eval\n", "eval/guides/eval.yaml").name == "guides"
    assert _load(tmp_path, "skill: legacy\n").name == "legacy"


def test_runner_defaults_to_claude_code(tmp_path: Path) -> None:
    assert _load(tmp_path, "execution: {prompt: x}\n").runner.type == "claude-code"
    cfg = _load(tmp_path, "runner: {effort: high}\n")
    assert (cfg.runner.type, cfg.runner.effort) == ("claude-code", "high")
    # a type-less block with a command keeps this tool's meaning (documented deviation)
    assert _load(tmp_path, "runner: {command: echo}\n").runner.type == "cli"


def test_metadata_title_parallelism_and_mlflow_block(tmp_path: Path) -> None:
    cfg = _load(tmp_path, """\
title: Weekly run
execution: {prompt: x, parallelism: 3}
generation: {strategy: synthetic, seeds: [{category: a, count: 2, builtin: docs/navigation}]}
outputs: [{path: out, types: {'*.md': document}}]
mlflow: {experiment: e1, tags: {team: ml}}
""")
    assert cfg.title == "Weekly run" and cfg.execution.parallelism == 3
    assert cfg.metadata["generation"]["strategy"] == "synthetic"
    assert cfg.metadata["output_types"] == {"out": {"*.md": "document"}}
    assert cfg.mlflow is not None and cfg.mlflow.experiment == "e1"
    assert cfg.mlflow.tags == {"team": "ml"}
    assert _load(tmp_path, "mlflow:\n").mlflow is None  # an empty block: no logging, as there


def test_parallelism_is_the_concurrency(tmp_path: Path) -> None:
    import argparse

    from eval_harness.cli.args import concurrency

    cfg = _load(tmp_path, "execution: {prompt: x, parallelism: 3}\n")
    assert concurrency(argparse.Namespace(concurrency=None), cfg) == 3
    assert concurrency(argparse.Namespace(concurrency=7), cfg) == 7


def test_agent_and_args_placeholders_pass_the_validator(tmp_path: Path) -> None:
    (tmp_path / "cases" / "c1").mkdir(parents=True)
    (tmp_path / "cases" / "c1" / "input.yaml").write_text("prompt: hi\n")
    (tmp_path / "eval.yaml").write_text("""\
execution: {skill: solver, arguments: "{prompt}"}
runner: {type: cli, command: "echo {agent} {args} {model}"}
models: {skill: m}
dataset: {path: cases}
""")
    code, _, err = run_cli("--config", str(tmp_path / "eval.yaml"), "--dry-run")
    assert code == 0, err


def test_path_scoped_permissions_compile_to_patterns() -> None:
    from eval_harness.aeh.runner_keys import compile_permission_rules

    deny = compile_permission_rules(
        ["mcp__*", {"path": "eval/", "tools": ["Read", "Grep", "Bash"]},
         {"path": "eval.yaml", "tools": ["Read", "Edit"]}, {"path": "", "tools": ["Read"]}],
        deny=True, where="permissions.deny", file="x")
    assert deny == ["mcp__*", "Read(eval/**)", "Grep(eval/**)", "Edit(eval/**)",
                    "Read(eval.yaml)", "Edit(eval.yaml)"]
    allow = compile_permission_rules([{"path": "src/", "tools": ["Bash", "Write"]}],
                                     deny=False, where="permissions.allow", file="x")
    # Bash is never path-scoped, and never over-granted; Write is governed by Edit rules
    assert allow == ["Edit(src/**)"]


def test_write_rules_compile_to_the_grammar_claude_enforces() -> None:
    """Claude Code applies no `Write(path)` rule to the Write tool and reads `/abs` relative
    to the settings file: a Write path rule becomes `Edit`, an absolute path `//abs`
    (proved against the real CLI in tests/runner/test_claude_code_real.py)."""
    from eval_harness.aeh.runner_keys import compile_permission_rules

    deny = compile_permission_rules(
        [{"path": "answers/", "tools": ["Write"]}, {"path": "/srv/key.txt", "tools": ["Read",
                                                                                 "Write"]},
         {"path": "out/", "tools": ["Write", "Edit"]}, "Write(notes/**)", "Write"],
        deny=True, where="permissions.deny", file="x")
    assert deny == ["Edit(answers/**)", "Read(//srv/key.txt)", "Edit(//srv/key.txt)",
                    "Edit(out/**)", "Edit(notes/**)", "Write"]
