"""Claiming a cell, so two orchestrators on one runs directory never run it twice.

Each orchestrator plans from its own scan of the runs directory; started together
(unsharded), both would plan every cell. Before running a cell a worker takes a
non-blocking ``flock`` on ``cases/<case-id>/.claim`` and holds it until the record is
written: a cell another process holds is left to it, and a cell whose ``record.json``
appeared after this process's scan was finished by another process and is not run again.
The kernel drops the lock when its holder dies (SIGKILL included), so a crashed
orchestrator never leaves a cell claimed. (Across machines this needs a filesystem whose
``flock`` is shared, as the run-directory lock does; shard instead where it is not.)

Clock skew: the resume index counts the record with the newest ``finished_at``. A record
written by a machine whose clock is behind the one of an earlier record of the same cell
would never count, so ``--retry-errors`` would pay for that cell on every run;
:func:`finished_after` dates the new record just past the earlier one instead.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
from collections.abc import Iterator

from eval_harness._util.file_modes import file_mode, make_dirs

CLAIM = ".claim"


@contextlib.contextmanager
def claim_cell(case_dir: str | os.PathLike[str]) -> Iterator[bool]:
    """Hold the cell's claim for the block; yields False when another process holds it."""
    case_dir = os.fspath(case_dir)
    make_dirs(case_dir)
    fd = os.open(os.path.join(case_dir, CLAIM), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, file_mode())
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def finished_after(previous: str | None, now: str) -> tuple[str, str | None]:
    """(``finished_at`` for a new record, a note or None): ``now``, unless an earlier record
    of the cell is dated at or after it (clock skew), then 1 ms past that record."""
    if not previous or previous < now:
        return now, None
    try:
        then = _dt.datetime.fromisoformat(previous)
    except ValueError:
        return now, None
    later = (then + _dt.timedelta(milliseconds=1)).isoformat(timespec="microseconds")
    return later, (f"clock behind an earlier record of this cell ({previous}); dated "
                   "just after it so this record counts")
