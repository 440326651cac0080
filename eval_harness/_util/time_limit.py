"""Calling user Python code with a time limit: the call runs in a daemon thread and the
caller stops waiting after ``timeout`` seconds (or when ``cancel`` is set).

Python cannot stop a thread, so a call that overruns keeps running, unobserved, until it
returns; its result is then discarded. :class:`Guard` keeps such leftovers from piling up:
while an abandoned call of one piece of code is still running, further calls of it are
refused at once instead of starting another thread that may never end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_POLL_S = 0.05  # how often a waiting caller looks at the cancel event


@dataclass
class CallResult:
    """How a timed call ended: ``finished`` False means timed out or cancelled."""

    finished: bool
    value: Any = None
    error: BaseException | None = None
    cancelled: bool = False


def call_with_timeout(func: Callable[..., Any], args: tuple[Any, ...], timeout: float,
                      cancel: threading.Event | None = None,
                      on_abandon: Callable[[threading.Event], None] | None = None,
                      name: str = "timed-call") -> CallResult:
    """Run ``func(*args)`` in a daemon thread named ``name``; wait at most ``timeout``
    seconds.

    ``on_abandon`` (optional) gets the call's *done* event when the caller gives up, so the
    owner can tell when the abandoned call has finally returned."""
    done = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = func(*args)
        except BaseException as exc:  # handed to the caller as the result
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name=name).start()
    deadline = time.monotonic() + timeout
    while True:
        if cancel is not None and cancel.is_set():
            break
        left = deadline - time.monotonic()
        if left <= 0:
            break
        wait = left if cancel is None else min(left, _POLL_S)
        if done.wait(wait):
            break
    if not done.is_set():
        if on_abandon is not None:
            on_abandon(done)
        return CallResult(False, cancelled=cancel is not None and cancel.is_set())
    return CallResult(True, box.get("value"), box.get("error"))


class Guard:
    """At most one abandoned (overrunning) call of a piece of code at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: threading.Event | None = None

    def busy(self) -> bool:
        """True while an earlier call that timed out has not returned yet."""
        with self._lock:
            if self._running is not None and self._running.is_set():
                self._running = None
            return self._running is not None

    def abandoned(self, done: threading.Event) -> None:
        """Remember an abandoned call (``done`` is set when it returns)."""
        with self._lock:
            self._running = done
