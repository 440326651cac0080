"""_util/atomic_files.py's streaming writer: the new content appears whole or not at all, and
the writers that used their own temp-file-and-rename now all go through this module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eval_harness._util.atomic_files import atomic_text_writer

ROOT = Path(__file__).resolve().parents[2]


def test_streamed_file_replaces_the_old_one_whole(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("old\n")
    with atomic_text_writer(path) as fh:
        fh.write("é1\n")
        assert path.read_text() == "old\n"  # nothing visible before the block ends
        fh.write("2\n")
    assert path.read_text(encoding="utf-8") == "é1\n2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]  # no temp file left


def test_an_error_mid_write_keeps_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_text_writer(path) as fh:
        fh.write("partial")
        raise RuntimeError("disk full")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]


def test_no_module_renames_files_itself() -> None:
    """One temp-file-and-rename implementation: _util/atomic_files.py."""
    allowed = {"eval_harness/_util/atomic_files.py": "the implementation",
               "eval_harness/reports/outset.py": "swaps whole output folders (renameat2), "
               "not a temp copy of one file"}
    offenders = []
    for src in (ROOT / "eval_harness").rglob("*.py"):
        if str(src.relative_to(ROOT)) in allowed:
            continue
        code = "\n".join(line.split("#")[0] for line in src.read_text().splitlines())
        if re.search(r"os\.replace\(|os\.rename\(|\.rename\(|\.replace\((tmp|path|target)", code):
            offenders.append(str(src.relative_to(ROOT)))
    assert offenders == []
