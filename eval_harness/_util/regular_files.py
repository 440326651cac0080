"""Open only regular files where a path comes from a config or from run data.

A FIFO named ``record.json`` (or ``dataset: /dev/zero``, ``extends: /dev/stdin``) used to
hang every reader: opening a FIFO for reading blocks until a writer comes, and a device
never ends. :func:`open_regular` opens non-blocking, checks ``fstat``, and refuses anything
but a regular file with an OSError (``EINVAL``), which callers treat as unreadable.
"""

from __future__ import annotations

import errno
import os
import stat

NOT_REGULAR = "not a regular file (a FIFO, device or socket)"


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, *,
                 nofollow: bool = False) -> int:
    """``os.open`` of a *regular* file; OSError for a FIFO, a device or a socket named like
    a run file (opening a FIFO for reading blocks until a writer comes, forever; /dev/zero
    never ends). Opened non-blocking, checked with ``fstat``, then made blocking again."""
    extra = os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if nofollow else 0)
    fd = os.open(path, flags | extra)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, os.fspath(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
