"""The cache the current command uses for LLM judge calls (set by the CLI around a run or
a rescore; None — no cache — in library use unless a caller activates one)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from eval_harness.cache.store import CallCache

_lock = threading.Lock()
_active: CallCache | None = None


def current_cache() -> CallCache | None:
    """The active cache (read from worker threads: a process-wide setting)."""
    return _active


@contextmanager
def activated(cache: CallCache | None) -> Iterator[CallCache | None]:
    """Make ``cache`` the active one for the duration of the block."""
    global _active
    with _lock:
        previous, _active = _active, cache
    try:
        yield cache
    finally:
        with _lock:
            _active = previous
