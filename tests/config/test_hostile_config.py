"""Attacks on the config and the dataset (issue 28): each is refused at load with exit 2,
the key path (or the file and line) — never an internal error, a hang or a folder name
ending in a newline."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_harness.config.dataset import load_dataset
from eval_harness.config.loader import load_config
from eval_harness.errors import ConfigError, DatasetError
from tests.conftest import run_cli


def _config(tmp: Path, **extra: Any) -> Path:
    (tmp / "cases.jsonl").write_text('{"id": "c1", "input": {"q": "x"}}\n')
    data = {"name": "h", "matrix": {"factors": {"model": ["a"]}},
            "runner": {"type": "cli", "command": "echo hi"}, "dataset": {"path": "cases.jsonl"},
            "judges": [{"name": "any", "regex": "."}], **extra}
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize(("key", "value"), [
    ("timeout", 1e308), ("timeout", 1e20), ("timeout", float("inf")), ("kill_grace", 1e308),
    ("retries", 10**30), ("max_log_bytes", 10**30), ("max_budget_usd", float("nan"))])
def test_numeric_ranges_are_validated_at_load(tmp_path: Path, key: str, value: Any) -> None:
    """`execution.timeout: 1e308` was accepted, then an OverflowError at run time."""
    with pytest.raises(ConfigError) as info:
        load_config(_config(tmp_path, execution={key: value}), env={})
    assert info.value.key_path == f"execution.{key}"


@pytest.mark.parametrize("name", ["demo\n", "demo\r", "de\x1bmo", "\n"])
def test_eval_name_never_keeps_a_newline_or_control_character(tmp_path: Path,
                                                              name: str) -> None:
    """The eval name names runs/<name>/: it used to keep a trailing newline. It is now
    cleaned as agent-eval-harness cleans names (letters, digits, `._-` kept), or refused
    with its key path when nothing usable is left."""
    try:
        loaded = load_config(_config(tmp_path, name=name), env={})
    except ConfigError as exc:
        assert exc.key_path == "name"
        return
    assert loaded.config.name.isprintable() and loaded.config.name.strip() == loaded.config.name
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", loaded.config.name)


@pytest.mark.parametrize("case_id", ["c1\n", "c1\r\n", "c\x1b1"])
def test_case_id_with_a_newline_is_refused(tmp_path: Path, case_id: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": case_id, "input": {"q": "x"}}) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert info.value.line == 1 and "case id" in info.value.detail


def test_judge_name_with_a_control_character_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_config(tmp_path, judges=[{"name": "ok\n", "regex": "."}]), env={})
    assert info.value.key_path == "judges[0].name"


@pytest.mark.parametrize(("key", "value", "where"), [
    ("extends", "/dev/zero", "extends"), ("dataset", {"path": "/dev/zero"}, "dataset.path")])
def test_device_paths_are_refused_with_the_key_path(tmp_path: Path, key: str, value: Any,
                                                    where: str) -> None:
    code, _, err = run_cli("--config", str(_config(tmp_path, **{key: value})), "--dry-run")
    assert code == 2 and f"{where}: " in err and "regular file" in err, err


def test_fifo_dataset_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.jsonl")
    code, _, err = run_cli("--config", str(_config(tmp_path, dataset={"path": "fifo.jsonl"})),
                           "--dry-run")
    assert code == 2 and "dataset.path" in err, err


def test_dataset_folder_without_cases_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli("--config", str(_config(tmp_path, dataset={"path": "empty"})),
                           "--dry-run")
    assert code == 2 and "dataset.path: the dataset has no cases" in err, err


def test_deeply_nested_jsonl_line_is_a_dataset_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "c1", "input": {"q": "x"}}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert info.value.line == 2 and "nested too deep" in info.value.detail


def test_non_utf8_jsonl_is_a_dataset_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "c1", "input": {"q": "x"}}\n{"id": "c2", "input": "\xff\xfe"}\n')
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert info.value.line == 2 and "UTF-8" in info.value.detail
