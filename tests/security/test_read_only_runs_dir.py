"""Issue 34 (earlier corpus): a read-only runs directory is a clear exit 2 naming the folder
with a hint — both when nothing is left to do and with ``--force`` — never an internal
error (70) from the first temp file written into it. Read-only for real: as root (who
writes through mode bits) the CLI runs in a private mount namespace where the runs
directory is a read-only bind mount (EROFS, as in the report); as another user the folder
is made 0555."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

READ_ONLY_MOUNT = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift '
                   '&& exec "$@"')


def _cli(work: Path, *args: str, read_only: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(work / "home"), "XDG_CACHE_HOME": str(work / "home"),
           "EVAL_HARNESS_CACHE": "off", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "eval_harness.cli.main", *args]
    if read_only is not None:
        if os.geteuid() == 0:
            argv = ["unshare", "-m", "sh", "-c", READ_ONLY_MOUNT, "sh", str(read_only), *argv]
        else:
            for p in [read_only, *read_only.rglob("*")]:
                mode = p.lstat().st_mode
                if stat.S_ISDIR(mode):
                    p.chmod(0o555)
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("extra", [[], ["--force"]])
def test_a_read_only_runs_dir_is_exit_2_with_the_path(tmp_path: Path, extra: list[str]) -> None:
    (tmp_path / "agent.py").write_text("print('ok')\n")
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c0", "input": {"q": "x"}}]))
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump({
        "name": "ro", "matrix": {"factors": {"model": ["m"]}},
        "runner": {"type": "cli", "command": [sys.executable, "-S", "agent.py"]},
        "dataset": {"path": "cases.yaml"},
        "judges": [{"name": "ok", "check": "return True, 'ok'"}]}))
    args = ("--config", "eval.yaml", "--runs-dir", "runs", "--no-analysis")
    done = _cli(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    try:
        done = _cli(tmp_path, *args, *extra, read_only=tmp_path / "runs")
    finally:
        for p in [tmp_path / "runs", *(tmp_path / "runs").rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
    assert done.returncode == 2, done.stderr
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert str(Path("runs") / "ro") in line and "not writable" in line and "hint:" in line, \
        done.stderr
    assert "internal error" not in done.stderr
