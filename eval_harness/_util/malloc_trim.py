"""Return freed memory to the system during analysis (glibc only; a no-op elsewhere).

glibc serves allocations of at least ``M_MMAP_THRESHOLD`` bytes with their own ``mmap``
and gives them back on ``free``, but by default it *raises* that threshold to the size of
every such block freed (up to 32 MiB on 64-bit), after which arrays of a few MiB come
from the heap and stay in the process's resident set once freed: an analysis that builds
and drops many row-sized numpy arrays then holds their high-water mark for the rest of
the run (measured: +40–90 MiB per phase at 720k rows). Setting the threshold explicitly
turns that adjustment off (mallopt(3), "M_MMAP_THRESHOLD"), so each large array is
unmapped when freed; ``trim`` hands back free heap pages too (malloc_trim(3)).

That fixed threshold suits phases that build and drop a few large arrays, not a loop that
allocates the same temporaries thousands of times (the mixed-model fit: every ≥ 128 KiB
temporary of each deviance evaluation became an mmap + munmap, 18 → 51 CPU-s, half of it
system time). ``heap_phase`` raises the threshold for such a loop and restores it after.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import sys
from collections.abc import Iterator

#: mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: glibc's default initial threshold: blocks of 128 KiB and more are mapped
MMAP_THRESHOLD = 128 * 1024
#: threshold inside a `heap_phase`: repeated temporaries up to this size reuse heap memory
LOOP_MMAP_THRESHOLD = 64 * 1024 * 1024

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


@contextlib.contextmanager
def heap_phase(threshold: int = LOOP_MMAP_THRESHOLD) -> Iterator[None]:
    """Inside the block, serve allocations below ``threshold`` from the heap (reused from
    one loop iteration to the next instead of mapped and unmapped); on exit restore the
    tuned threshold and trim, so the loop's high-water mark leaves the resident set. A
    no-op unless `tune` took effect."""
    lib = _glibc() if _tuned else None
    if lib is None:
        yield
        return
    lib.mallopt(_M_MMAP_THRESHOLD, threshold)
    lib.mallopt(_M_TRIM_THRESHOLD, threshold)
    try:
        yield
    finally:
        lib.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        lib.mallopt(_M_TRIM_THRESHOLD, MMAP_THRESHOLD)
        lib.malloc_trim(0)
