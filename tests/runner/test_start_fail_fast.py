"""Issue 37 friction: an agent that is not executable. The first cells all fail to start
with the same error, so the run stops there (exit 2) with a ``chmod +x`` hint, instead of
attempting every cell and exiting 4 after the run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def _config(tmp: Path, agent: Path) -> Path:
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": f"c{i:02d}", "input": {"q": str(i)}}) + "\n"
                             for i in range(10)))
    path = tmp / "eval.yaml"
    path.write_text(f"""\
name: noexec
matrix:
  factors:
    model: [a, b]
  replications: 2
runner:
  type: cli
  command: {agent} {{q}}
dataset:
  path: {cases}
judges:
  - name: answered
    check: 'return bool(outputs.get("output")), ""'
""")
    return path


def test_a_program_that_is_not_executable_stops_the_run(tmp_path: Path) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\necho \"$1\"\n")
    agent.chmod(0o644)  # not executable
    code, _, err = run_cli("--config", str(_config(tmp_path, agent)), "--runs-dir",
                           str(tmp_path / "runs"), "--concurrency", "1", "--no-judge-check")
    assert code == 2, err
    assert "could not be started" in err and "Permission denied" in err
    assert f"chmod +x {agent}" in err
    records = list((tmp_path / "runs" / "noexec").glob("*/cases/*/record.json"))
    assert len(records) == 3  # 3 of the 40 cells tried, not 40


def test_a_program_that_starts_runs_every_cell(tmp_path: Path) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\necho \"$1\"\n")
    agent.chmod(0o755)
    code, _, err = run_cli("--config", str(_config(tmp_path, agent)), "--runs-dir",
                           str(tmp_path / "runs"), "--concurrency", "2", "--no-judge-check")
    assert code == 0, err
    assert len(list((tmp_path / "runs" / "noexec").glob("*/cases/*/record.json"))) == 40
