"""Labels beside the runs: append-only JSON Lines, the last label per verdict counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_harness.errors import ConfigError
from eval_harness.store.labels import (
    LabelRow,
    append_label,
    labels_path,
    latest_labels,
    read_labels,
)


def _row(label, who: str = "ana", case: str = "c1") -> LabelRow:
    return LabelRow(schema_version=1, run="r1", case=case, condition="abcdef123456",
                    replication=1, judge="correct", label=label, who=who,
                    when="2026-07-30T10:00:00+00:00")


def test_round_trip_and_latest_wins(tmp_path: Path) -> None:
    append_label(tmp_path, _row("right"))
    append_label(tmp_path, _row("wrong", who="bo"))
    append_label(tmp_path, _row(3.5, case="c2"))
    rows = read_labels(labels_path(tmp_path))
    assert [r.label for r in rows] == ["right", "wrong", 3.5]
    latest = latest_labels(rows)
    assert latest[("abcdef123456", 1, "c1", "correct")].label == "wrong"
    assert len(latest) == 2
    text = labels_path(tmp_path).read_text().splitlines()[0]
    assert '"run": "r1"' in text and '"who": "ana"' in text and '"when": ' in text


def test_missing_file_is_no_labels(tmp_path: Path) -> None:
    assert read_labels(tmp_path / "labels.jsonl") == []


@pytest.mark.parametrize("line", ['{"run": "r"}', "not json",
                                  '{"run": "r", "case": "c", "condition": "x", "judge": "j", '
                                  '"label": "maybe", "when": "t"}'])
def test_bad_line_names_file_and_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ConfigError) as err:
        read_labels(path)
    assert f"{path}:1" in str(err.value)


@pytest.mark.parametrize(("raw", "says"), [(b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
                                          (b'{"run": "\xff"}', "not UTF-8")])
def test_deep_or_undecodable_line_is_a_config_error(tmp_path: Path, raw: bytes,
                                                    says: str) -> None:
    # main: a RecursionError / UnicodeDecodeError traceback (--labels FILE is user input)
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"\n" + raw + b"\n")
    with pytest.raises(ConfigError) as err:
        read_labels(path)
    assert f"{path}:2" in str(err.value) and says in str(err.value)
