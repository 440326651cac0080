"""Atomic file writes and inter-process locks for run directories.

Crash-atomicity: a file is written under a unique temporary name in the same folder and
then ``os.replace``d onto its final name. Rename is atomic on POSIX, so a reader (or a
resumed run after SIGKILL) sees either the old file, no file, or the complete new one —
never a prefix. No fsync by default: SIGKILL of the orchestrator cannot lose data the
kernel already holds, and an fsync per record would dominate the cost of cheap cells.
Set ``EVAL_HARNESS_FSYNC=1`` to also survive power loss (fsync of file and folder).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_FSYNC = os.environ.get("EVAL_HARNESS_FSYNC", "") not in ("", "0")
_counter = 0
_counter_lock = threading.Lock()


def _tmp_name(path: Path) -> Path:
    global _counter
    with _counter_lock:
        _counter += 1
        n = _counter
    # leading dot + .tmp suffix: never matched by the `record.json` glob of a loader
    return path.with_name(f".{path.name}.{os.getpid()}.{n}.tmp")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename)."""
    tmp = _tmp_name(path)
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            if _FSYNC:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if _FSYNC:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def dumps(value: Any) -> bytes:
    """JSON as written in run directories (UTF-8, non-JSON values as text).

    Compact on purpose: with ``indent`` the stdlib falls back to its pure-Python encoder,
    which cost more per cell than spawning the process (pipe through ``jq`` to read).
    """
    return json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")


def atomic_write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON atomically."""
    atomic_write_bytes(path, dumps(value))


def write_json(path: Path, value: Any) -> None:
    """Plain (non-atomic) JSON write, for files only trusted once record.json exists."""
    path.write_bytes(dumps(value))


def read_json(path: Path) -> Any:
    """Parse a JSON file; None when missing or unreadable (a torn file cannot exist)."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created if needed) for the ``with`` block.

    Serialises processes (shards writing into one runs directory) on this machine and on
    filesystems that honour flock (local disks; NFS with lock support).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
