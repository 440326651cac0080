"""Issue 37 friction: ``runner.env`` (agent-eval-harness's key, merged into
``execution.env``) was silently accepted in any shape — a list dropped, a nested value
turned into its Python text. Now a wrong shape is refused under its own key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_harness.config.loader import load_config
from eval_harness.errors import ConfigError

BASE = """\
name: r
matrix:
  factors:
    model: [m]
runner:
  type: cli
  command: echo hi
  env: {env}
dataset:
  path: c.jsonl
judges:
  - name: j
    check: 'return True, ""'
"""


def _load(tmp: Path, env: str) -> object:
    (tmp / "c.jsonl").write_text('{"id": "a", "input": {}}\n')
    path = tmp / "eval.yaml"
    path.write_text(BASE.format(env=env))
    return load_config(path)


@pytest.mark.parametrize(("env", "where"), [("[A, B]", "runner.env"),
                                            ("{X: [1, 2]}", "runner.env.X"),
                                            ("{X: {a: 1}}", "runner.env.X"),
                                            ('{"A B": x}', "runner.env")])
def test_a_wrong_runner_env_names_runner_env(tmp_path: Path, env: str, where: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, env)
    assert info.value.key_path == where
    assert "execution.env" not in str(info.value)


def test_runner_env_reaches_the_agent(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "{X: one, N: 2}")
    assert loaded.config.execution.env == {"X": "one", "N": "2"}  # type: ignore[attr-defined]
