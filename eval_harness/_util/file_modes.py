"""Permission bits of everything we create under a runs directory.

One switch for the whole tree: **private** (the default) creates folders 0700 and files
0600, so one user's model replies, logs and labels are not readable by the other users of
the machine; **shared** (``execution.runs_mode: shared``) creates them 0777 / 0666 and lets
the user's umask decide, as a shared runs folder or a CI artifact wants. The umask applies
on top in both cases (it can only take bits away).

Every writer of run files asks here for its mode (the atomic writer, the log files, the
lock files, :func:`make_dirs`), so there is no chmod afterwards. The setting is
process-wide: one run configures it before its first write (:func:`set_runs_mode`).
"""

from __future__ import annotations

import os
import shutil
from typing import Literal, Union

RunsMode = Literal["private", "shared"]
StrPath = Union[str, "os.PathLike[str]"]

_MODES: dict[str, tuple[int, int]] = {"private": (0o700, 0o600), "shared": (0o777, 0o666)}
_current: RunsMode = "private"


def set_runs_mode(mode: RunsMode) -> None:
    """Choose the permission bits of folders and files created from now on."""
    global _current
    if mode not in _MODES:
        raise ValueError(f"runs mode must be private or shared, not {mode!r}")
    _current = mode


def runs_mode() -> RunsMode:
    return _current


def dir_mode() -> int:
    """Mode passed to ``mkdir`` for a folder we create."""
    return _MODES[_current][0]


def file_mode() -> int:
    """Mode passed to ``os.open(..., O_CREAT)`` for a file we create."""
    return _MODES[_current][1]


def make_dirs(path: StrPath) -> None:
    """``mkdir -p`` where every folder created (leaf *and* missing parents) gets
    :func:`dir_mode` — ``os.makedirs`` applies its mode to the leaf only."""
    path = os.path.abspath(os.fspath(path))
    missing: list[str] = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    mode = dir_mode()
    for folder in reversed(missing):
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise


def create_file(path: StrPath, append: bool = False) -> int:
    """A descriptor for writing ``path``, created with :func:`file_mode` (truncated, or
    appended to with ``append``); wrap it with ``open(fd, ...)``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    return os.open(path, flags, file_mode())


def copy_file(source: StrPath, dest: StrPath) -> None:
    """Copy a file's bytes into a new file created with :func:`file_mode` (not the
    source's mode)."""
    with open(source, "rb") as src, open(create_file(dest), "wb") as out:
        shutil.copyfileobj(src, out)


def limit(mode: int) -> int:
    """``mode`` (as copied from a source file) without the group/other bits when private:
    an executable plugin file stays executable, for its owner only."""
    return mode & (0o700 if _current == "private" else 0o777)
