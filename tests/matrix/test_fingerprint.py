"""Editing the agent reruns its cells: the files a config points at are in the digest.
It used to say "N already complete" and keep the stale results."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from eval_harness.matrix.experiment import prepare
from tests.conftest import run_cli


def _setup(tmp: Path, runner: dict[str, Any], **extra: Any) -> Path:
    (tmp / "agent.py").write_text("print('v1')\n")
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"q": "x"}} for i in range(2)]))
    cfg = {"name": "fp", "matrix": {"factors": {"model": ["a", "b"]}}, "runner": runner,
           "dataset": {"path": "cases.yaml"}, **extra}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


CLI = {"type": "cli", "command": f"{sys.executable} -S agent.py {{model}}"}


def test_editing_the_cli_agent_script_reruns_its_cells_with_a_notice(tmp_path: Path) -> None:
    cfg = _setup(tmp_path, CLI)
    argv = ["--config", str(cfg), "--runs-dir", str(tmp_path / "runs"), "--no-analysis"]
    code, _, err = run_cli(*argv)
    assert code == 0, err
    code, _, err = run_cli(*argv)
    assert "0 of 4 cells run" in err and "4 already complete" in err
    (tmp_path / "agent.py").write_text("print('v2')\n")  # the user edits the agent
    code, _, err = run_cli(*argv)
    assert code == 0, err
    assert "the agent changed since the last run: agent.py (changed)" in err
    assert "4 of 4 cells run" in err and "4 stale rerun" in err
    outputs = list((tmp_path / "runs" / "fp").glob("*/cases/*/outputs.json"))
    assert outputs and all("v2" in p.read_text() for p in outputs)


def test_only_files_inside_the_config_dir_are_hashed_by_default(tmp_path: Path) -> None:
    exp = prepare(_setup(tmp_path, CLI))
    assert list(exp.fingerprint) == ["agent.py"]  # not the interpreter


def test_python_runner_module_source_is_in_the_digest(tmp_path: Path) -> None:
    (tmp_path / "mymod.py").write_text("def run(i, c):\n    return 'a'\n")
    cfg = _setup(tmp_path, {"type": "python", "function": "mymod:run"})
    before = prepare(cfg).digests
    (tmp_path / "mymod.py").write_text("def run(i, c):\n    return 'b'\n")
    after = prepare(cfg)
    assert list(after.fingerprint) == ["mymod.py"]
    assert set(before.values()).isdisjoint(after.digests.values())


def test_fingerprint_globs_enter_the_digest(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.txt").write_text("be brief")
    cfg = _setup(tmp_path, {"type": "cli", "command": "/bin/echo {model}"},
                 fingerprint=["prompts/**/*.txt"])
    before = prepare(cfg)
    assert list(before.fingerprint) == ["prompts/system.txt"]
    (tmp_path / "prompts" / "system.txt").write_text("be thorough")
    assert set(before.digests.values()).isdisjoint(prepare(cfg).digests.values())


def test_a_fingerprint_pattern_matching_nothing_is_a_config_error(tmp_path: Path) -> None:
    cfg = _setup(tmp_path, CLI, fingerprint=["srv/*.py"])
    code, _, err = run_cli("--config", str(cfg), "--dry-run")
    assert code == 2, err
    assert "fingerprint[0]: `srv/*.py` matches no file" in err
