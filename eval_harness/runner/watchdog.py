"""One thread enforcing every subprocess deadline: TERM the group, KILL it ``grace`` s later.

Workers block on their child's exit (no polling); the watchdog sleeps until the earliest
deadline in a heap of ``(deadline, seq, watch)``. At a watch's deadline it sets
``timed_out``, sends SIGTERM to the process group and re-arms the entry at
``now + grace``; at that second deadline, if the child still has not exited, SIGKILL.

Invariant that makes signalling safe: a worker calls :meth:`Watchdog.release` after its
child has exited but *before* reaping it, and every signal is sent under the same lock
after checking ``done``. An unreaped zombie keeps its pid (and so its process-group id)
reserved, so a signal can never reach an unrelated, recycled process group.

Finished watches stay in the heap until their deadline (lazy deletion); the heap is
rebuilt when more than half of it is finished, so its size stays O(live processes) and
each operation O(log n) amortised.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import signal
import threading
import time

_COMPACT_MIN = 256


class Watch:
    """One watched child: its process-group id, deadline and state."""

    __slots__ = ("armed_kill", "done", "grace", "pgid", "queued", "timed_out")

    def __init__(self, pgid: int, grace: float) -> None:
        self.pgid = pgid
        self.grace = grace
        self.timed_out = False  # set when the deadline passed (TERM sent)
        self.done = False  # the child exited (not yet reaped) or the watch was dropped
        self.armed_kill = False  # the entry in the heap is the KILL stage
        self.queued = True  # an entry for it is in the heap


class Watchdog:
    """A shared deadline enforcer (see the module doc); the thread starts on first use."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Watch]] = []
        self._seq = itertools.count()
        self._finished_in_heap = 0
        self._owner_pid = -1  # the process whose thread runs the loop (reset after fork)

    def watch(self, pgid: int, timeout: float, grace: float) -> Watch:
        """Start watching process group ``pgid``; its deadline is ``timeout`` s from now."""
        watch = Watch(pgid, grace)
        deadline = time.monotonic() + timeout
        with self._cond:
            if self._owner_pid != os.getpid():
                self._start()
            heapq.heappush(self._heap, (deadline, next(self._seq), watch))
            if self._heap[0][2] is watch:  # new earliest deadline: wake the sleeper
                self._cond.notify()
        return watch

    def release(self, watch: Watch) -> None:
        """The child has exited (or the caller gives up on it): never signal it again."""
        with self._cond:
            if watch.done:
                return
            watch.done = True
            if not watch.queued:
                return
            self._finished_in_heap += 1
            n = len(self._heap)
            if n >= _COMPACT_MIN and 2 * self._finished_in_heap > n:
                self._heap = [e for e in self._heap if not e[2].done]
                heapq.heapify(self._heap)
                self._finished_in_heap = 0

    def signal(self, watch: Watch, sig: int) -> None:
        """Send ``sig`` to the watch's process group unless its child has already exited."""
        with self._cond:
            if not watch.done:
                _killpg(watch.pgid, sig)

    def _after_fork_in_child(self) -> None:
        # The parent's thread (and possibly a held lock) did not survive the fork.
        self._cond = threading.Condition(threading.Lock())
        self._heap = []
        self._finished_in_heap = 0
        self._owner_pid = -1

    def _start(self) -> None:
        # Called with the lock held; after a fork the parent's thread does not exist here.
        self._owner_pid = os.getpid()
        threading.Thread(target=self._loop, name="eval-watchdog", daemon=True).start()

    def _loop(self) -> None:
        with self._cond:
            while True:
                heap = self._heap
                if not heap:
                    self._cond.wait()
                    continue
                deadline, _, watch = heap[0]
                if watch.done:
                    heapq.heappop(heap)
                    self._finished_in_heap -= 1
                    continue
                now = time.monotonic()
                if deadline > now:
                    self._cond.wait(deadline - now)
                    continue
                heapq.heappop(heap)
                if not watch.armed_kill:
                    watch.timed_out = True
                    watch.armed_kill = True
                    _killpg(watch.pgid, signal.SIGTERM)
                    heapq.heappush(heap, (now + watch.grace, next(self._seq), watch))
                else:
                    watch.queued = False
                    _killpg(watch.pgid, signal.SIGKILL)


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


#: the process-wide watchdog used by :class:`~eval_harness.runner.process.ProcessGroup`
WATCHDOG = Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WATCHDOG._after_fork_in_child)
