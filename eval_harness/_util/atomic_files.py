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
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO, Union

from eval_harness._util.file_modes import file_mode, make_dirs
from eval_harness._util.redact import redact
from eval_harness._util.regular_files import open_regular

_FSYNC = os.environ.get("EVAL_HARNESS_FSYNC", "") not in ("", "0")
_counter = itertools.count(1)  # next() on a C counter is atomic under the GIL
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
StrPath = Union[str, "os.PathLike[str]"]


def _tmp_name(path: str) -> str:
    head, name = os.path.split(path)
    # leading dot + .tmp suffix: never matched by the `record.json` glob of a loader
    return os.path.join(head, f".{name}.{os.getpid()}.{next(_counter)}.tmp")


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_bytes(path: StrPath, data: bytes) -> None:
    """Create or truncate ``path`` and write ``data`` (plain, not atomic)."""
    fd = os.open(path, _NEW_FILE, file_mode())
    try:
        _write_fd(fd, data)
    finally:
        os.close(fd)


def atomic_write_bytes(path: StrPath, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename)."""
    path = os.fspath(path)
    tmp = _tmp_name(path)
    try:
        fd = os.open(tmp, _NEW_FILE | os.O_EXCL, file_mode())
        try:
            _write_fd(fd, data)
            if _FSYNC:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if _FSYNC:
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


@contextlib.contextmanager
def atomic_text_writer(path: StrPath) -> Iterator[TextIO]:
    """A text file (UTF-8) whose content replaces ``path`` atomically when the ``with``
    block ends normally; on an exception the temporary file is removed and ``path`` is
    left as it was. For files written in chunks (a large JSON-lines file is never one
    string in memory)."""
    path = os.fspath(path)
    tmp = _tmp_name(path)
    try:
        with open(os.open(tmp, _NEW_FILE | os.O_EXCL, file_mode()), "w", encoding="utf-8") as fh:
            yield fh
            if _FSYNC:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def dumps(value: Any) -> bytes:
    """JSON as written in run directories (UTF-8, non-JSON values as text).

    Compact on purpose: with ``indent`` the stdlib falls back to its pure-Python encoder,
    which cost more per cell than spawning the process (pipe through ``jq`` to read).
    """
    return redact(_ENCODER.encode(value)).encode("utf-8")  # secrets masked (redact.py)


def _text(value: Any) -> str:
    # dates as ISO-8601 (as pydantic writes them), anything else as str()
    iso = getattr(value, "isoformat", None)
    return iso() if callable(iso) else str(value)


# one encoder for every write (json.dumps builds a new one per call when given options);
# encode() keeps no state between calls, so sharing it across threads is safe
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_text)


def atomic_write_json(path: StrPath, value: Any) -> None:
    """Write ``value`` as JSON atomically."""
    atomic_write_bytes(path, dumps(value))


def write_json(path: StrPath, value: Any) -> None:
    """Plain (non-atomic) JSON write, for files only trusted once record.json exists."""
    write_bytes(path, dumps(value))


def read_json(path: StrPath) -> Any:
    """Parse a JSON file; None when missing or unreadable (a torn file cannot exist).

    Plain ``os`` calls, no file object: recounting a run reads every record.json."""
    try:
        fd = open_regular(path)  # a FIFO / device named like a run file: None, never a hang
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(fd)
        return json.loads(b"".join(chunks))
    except (OSError, ValueError, RecursionError):  # RecursionError: 100k-deep nesting
        return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (created if needed) for the ``with`` block.

    Serialises processes (shards writing into one runs directory) on this machine and on
    filesystems that honour flock (local disks; NFS with lock support).
    """
    make_dirs(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, file_mode())
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
