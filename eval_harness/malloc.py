"""Return freed memory to the system during analysis (glibc only; a no-op elsewhere).

glibc serves allocations of at least ``M_MMAP_THRESHOLD`` bytes with their own ``mmap``
and gives them back on ``free``, but by default it *raises* that threshold to the size of
every such block freed (up to 32 MiB on 64-bit), after which arrays of a few MiB come
from the heap and stay in the process's resident set once freed: an analysis that builds
and drops many row-sized numpy arrays then holds their high-water mark for the rest of
the run (measured: +40–90 MiB per phase at 720k rows). Setting the threshold explicitly
turns that adjustment off (mallopt(3), "M_MMAP_THRESHOLD"), so each large array is
unmapped when freed; ``trim`` hands back free heap pages too (malloc_trim(3)).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

#: mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: glibc's default initial threshold: blocks of 128 KiB and more are mapped
MMAP_THRESHOLD = 128 * 1024

_libc: ctypes.CDLL | None = None
_tuned = False


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            lib.gnu_get_libc_version  # noqa: B018 - raises AttributeError on musl etc.
            _libc = lib
        except (OSError, AttributeError):
            return None
    return _libc


def tune() -> bool:
    """Fix the mmap threshold (and the trim threshold) at their initial values; True
    when glibc took them. Idempotent; affects this process only."""
    global _tuned
    lib = _glibc()
    if lib is None:
        return False
    if not _tuned:
        ok = (lib.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
              and lib.mallopt(_M_TRIM_THRESHOLD, MMAP_THRESHOLD) == 1)
        _tuned = ok
    return _tuned


def trim() -> None:
    """Give free heap memory back to the system (between phases)."""
    lib = _glibc()
    if lib is not None:
        lib.malloc_trim(0)
