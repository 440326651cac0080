"""Config loading: extends, ${VAR}, unknown keys, lines, masking, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_harness.config.loader import load_config
from eval_harness.config.masking import mask_secrets
from eval_harness.errors import ConfigError
from tests.conftest import run_cli

BASE = """\
name: base
matrix:
  factors:
    model: [m1, m2]
runner:
  type: cli
  command: "echo {model}"
  extra_args: [a, b]
dataset:
  path: cases.yaml
judges:
  - name: j1
    contains: foo
    weight: 1
  - name: j2
    contains: bar
"""


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def test_extends_deep_merge_judges_by_name_lists_replaced(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", BASE)
    child = _write(tmp_path, "child.yaml", """\
extends: base.yaml
name: child
runner:
  command: "run {model}"
  extra_args: [c]
judges:
  - name: j1
    weight: 2
  - name: j3
    regex: "x+"
""")
    cfg = load_config(child, env={}).config
    assert cfg.name == "child"
    assert cfg.runner is not None and cfg.runner.command == "run {model}"
    assert cfg.runner.type == "cli"  # kept from base
    assert cfg.runner.extra_args == ["c"]  # other lists replaced
    assert [j.name for j in cfg.judges] == ["j1", "j2", "j3"]
    assert cfg.judges[0].weight == 2 and cfg.judges[0].contains == "foo"


def test_extends_list_later_wins(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", "description: from-a\nexecution: {timeout: 5}\n")
    _write(tmp_path, "b.yaml", "description: from-b\n")
    child = _write(tmp_path, "c.yaml", "extends: [a.yaml, b.yaml]\nname: c\n")
    cfg = load_config(child, env={}).config
    assert cfg.description == "from-b"
    assert cfg.execution.timeout == 5


def test_extends_cycle_names_chain(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", "extends: b.yaml\nname: a\n")
    _write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "a.yaml", env={})
    assert "a.yaml -> b.yaml -> a.yaml" in info.value.message
    assert info.value.key_path == "extends"


def test_extends_depth_limit(tmp_path: Path) -> None:
    for i in range(10):
        _write(tmp_path, f"p{i}.yaml", f"extends: p{i + 1}.yaml\n" if i < 9 else "name: deep\n")
    with pytest.raises(ConfigError, match="deeper than 8"):
        load_config(tmp_path / "p0.yaml", env={})


def test_env_interpolation_and_default(tmp_path: Path) -> None:
    path = _write(tmp_path, "e.yaml", "name: e\ndescription: '${WHO}-${MISSING:-dflt}-$${X}'\n")
    cfg = load_config(path, env={"WHO": "me"})
    assert cfg.config.description == "me-dflt-${X}"
    assert cfg.raw["description"] == "${WHO}-${MISSING:-dflt}-$${X}"  # raw is never resolved


def test_missing_env_names_variable_and_path(tmp_path: Path) -> None:
    path = _write(tmp_path, "e.yaml", "name: e\nruntime_secret: 1\n")
    path = _write(tmp_path, "e.yaml", "name: e\nrunner:\n  type: http\n  url: ${NOPE_URL}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert "NOPE_URL" in info.value.message
    assert info.value.key_path == "runner.url"
    assert info.value.line == 4


def test_unknown_key_has_line_and_suggestion(tmp_path: Path) -> None:
    path = _write(tmp_path, "u.yaml", "name: u\nexecution:\n  timout: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert info.value.key_path == "execution.timout"
    assert info.value.line == 3
    assert "timeout" in (info.value.hint or "")


def test_print_config_masks_secrets_and_never_resolves(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.yaml", "name: s\nrunner:\n  type: openai\n  api_key: sk-literal-123\n"
                  "  headers: {Authorization: '${TOKEN}'}\n")
    code, out, _ = run_cli("--config", str(path), "--print-config", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["runner"]["api_key"] == "***"
    assert data["runner"]["headers"]["Authorization"] == "${TOKEN}"
    assert "sk-literal" not in out
    assert mask_secrets({"password": "x"}) == {"password": "***"}


def test_schema_command_prints_json_schema() -> None:
    code, out, _ = run_cli("schema")
    assert code == 0
    schema = json.loads(out)
    assert "matrix" in schema["properties"]
    assert schema["additionalProperties"] is False


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.yaml", "name: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigError):
        load_config(path, env={})
