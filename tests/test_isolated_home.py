"""Issue 37 friction: the test suite wrote stub entries into the user's real model-call
cache (~/.cache/eval_harness/calls.sqlite3). Every test runs with its own HOME and XDG
directories (tests/conftest.py, autouse), so even the cache's default location — what a
test that drops EVAL_HARNESS_CACHE_DIR, or a child process, falls back to — is private."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: read when this module is imported, before any test's fixtures run: the user's HOME
_USER_HOME = Path(os.path.expanduser("~")).resolve()
_USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or _USER_HOME / ".cache").resolve()


def _under(path: Path, root: Path) -> bool:
    return path.resolve() == root or root in path.resolve().parents


def test_the_default_call_cache_is_not_the_users(monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_harness.cache.store import CallCache, default_dir

    monkeypatch.delenv("EVAL_HARNESS_CACHE_DIR", raising=False)
    assert not _under(Path(os.environ["HOME"]), _USER_HOME)
    directory = default_dir()
    assert not _under(directory, _USER_CACHE) and not _under(directory, _USER_HOME)
    # a child process that only inherits the environment lands there too
    done = subprocess.run([sys.executable, "-c",
                           "from eval_harness.cache.store import default_dir; print(default_dir())"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert Path(done.stdout.strip()) == directory
    # writing there leaves the user's cache as it was
    CallCache(directory).close()
    assert (directory / "calls.sqlite3").exists() or any(directory.iterdir())
