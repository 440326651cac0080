"""Issue 34 (cache / file modes): what a run creates under the runs directory is private by
default — every folder 0700, every file 0600 (records, logs, run.json, eval_config.json,
hook logs, the verdict cache, labels) — and ``execution.runs_mode: shared`` lets the
user's umask decide, for a runs folder shared with a group."""
from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from eval_harness._util import file_modes
from eval_harness.store.labels import LabelRow, append_label


@pytest.fixture()
def loose_umask(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """umask 002 (group-writable, world-readable): what private mode must override."""
    monkeypatch.setattr(file_modes, "_current", file_modes.runs_mode())  # restored after
    old = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(old)


def _run(tmp_path: Path, cli, runs_mode: str | None) -> Path:
    (tmp_path / "agent.py").write_text(
        "import json, sys\nprint('working', file=sys.stderr)\n"
        "print(json.dumps({'output': 'ok'}))\n")
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"question": f"q{i}"}} for i in range(2)]))
    execution: dict = {"timeout": 30, "retries": 0}
    if runs_mode is not None:
        execution["runs_mode"] = runs_mode
    cfg = {"name": "modes", "matrix": {"factors": {"model": ["m1", "m2"]}},
           "runner": {"type": "cli", "output_format": "json",
                      "command": [sys.executable, "-S", str(tmp_path / "agent.py")]},
           "dataset": {"path": "cases.yaml"}, "execution": execution,
           "hooks": {"before_all": [{"command": "echo hello"}],
                     "before_each": [{"command": "echo case"}]},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    runs = tmp_path / "runs"
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir", str(runs),
                       "--no-cache", "--no-analysis")
    assert code == 0, err
    eval_dir = runs / "modes"
    run = next(p for p in eval_dir.iterdir() if (p / "run.json").is_file())
    append_label(eval_dir, LabelRow(run=run.name, case="c0", condition="0" * 12,
                                    judge="ok", label="right", who="me",
                                    when="2026-01-01T00:00:00Z"))
    return eval_dir


def _modes(eval_dir: Path) -> tuple[dict[str, int], dict[str, int]]:
    dirs, files = {str(eval_dir): stat.S_IMODE(eval_dir.stat().st_mode)}, {}
    for top, names, leaves in os.walk(eval_dir):
        for name in names:
            dirs[os.path.join(top, name)] = stat.S_IMODE(os.stat(os.path.join(top, name)).st_mode)
        for name in leaves:
            files[os.path.join(top, name)] = stat.S_IMODE(os.stat(os.path.join(top, name)).st_mode)
    return dirs, files


def test_run_dirs_and_files_are_private_by_default(tmp_path: Path, cli, loose_umask) -> None:
    eval_dir = _run(tmp_path, cli, None)
    dirs, files = _modes(eval_dir)
    names = {os.path.basename(f) for f in files}
    # the kinds of file the issue names are all there (the check covers them)
    assert {"run.json", "record.json", "stdout.log", "stderr.log", "eval_config.json",
            "labels.jsonl"} <= names | {n.lstrip(".") for n in names}, sorted(names)
    assert any("/hooks/" in f for f in files), sorted(files)
    assert {d: m for d, m in dirs.items() if m != 0o700} == {}
    assert {f: m for f, m in files.items() if m != 0o600} == {}


def test_shared_runs_mode_keeps_the_umask(tmp_path: Path, cli, loose_umask) -> None:
    eval_dir = _run(tmp_path, cli, "shared")
    dirs, files = _modes(eval_dir)
    assert {d: m for d, m in dirs.items() if m != 0o775} == {}
    assert {f: m for f, m in files.items() if m != 0o664} == {}


def test_runs_mode_is_validated_with_its_key_path(tmp_path: Path, cli) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c", "input": {}}]))
    cfg = {"name": "bad", "runner": {"type": "cli", "command": ["true"]},
           "dataset": {"path": "cases.yaml"}, "execution": {"runs_mode": "public"},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir",
                       str(tmp_path / "runs"))
    assert code == 2, err
    assert "execution.runs_mode" in err and "private" in err and "shared" in err, err
