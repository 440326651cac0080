"""The shared reader of user-supplied JSON files: every failure is one ConfigError (exit
2) naming the file, never a RecursionError / UnicodeDecodeError traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eval_harness.config.jsonl import read_json_file
from eval_harness.errors import ConfigError

DEEP = b"[" * 200_000 + b"]" * 200_000


@pytest.mark.parametrize(("content", "says"), [
    (DEEP, "nested too deep"),
    (b'{"a": "\xff\xfe"}', "not UTF-8 text (byte 8 of the file)"),
    (b'{"a": 1,', "invalid JSON"),
])
def test_bad_files_are_config_errors_naming_the_file(tmp_path: Path, content: bytes,
                                                     says: str) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as err:
        read_json_file(path, hint="re-export it")
    assert says in err.value.detail and err.value.file == str(path)
    assert err.value.exit_code == 2


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="cannot read"):
        read_json_file(fifo)


def test_a_good_file_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text('{"a": [1, "é"]}', encoding="utf-8")
    assert read_json_file(path) == {"a": [1, "é"]}
