"""Cells to Ray tasks for :mod:`eval_harness.runner.ray_executor`: one at a time while
the cluster has CPUs free, in batches once it is busy (a task's own cost is a few
milliseconds, as long as a trivial cell)."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from typing import Any

from eval_harness.runner.contract import RunResult

#: cells grouped into one task at most, the seconds of work a batch aims at (cells that
#: take longer go alone; a task's own cost, a few ms, is then a few percent of it), and
#: how long a busy cluster waits to group them
MAX_BATCH = 64
BATCH_WORK_S = 0.2
LINGER_S = 0.004
#: seconds between two reads of the cluster's CPU count
CPU_RECOUNT_S = 5.0

_Item = tuple[tuple[Any, ...], "Future[Any]"]


class Batcher:
    """Submits the cells as Ray tasks, many to a task once the workers are busy.

    A task costs the driver, the raylet and the worker a few milliseconds of CPU between
    them, more than a trivial cell. So at most two tasks per CPU of the cluster are in
    flight (one running, one waiting: a worker that finishes one starts the next at
    once; CPUs recounted as nodes come and go), and while that many are, the cells
    submitted meanwhile wait here and leave together when a task is done, up to
    :meth:`batch_size` (about :data:`BATCH_WORK_S` of work). Below that, a cell goes out
    at once with any others already waiting, and once every CPU has a task, with what
    arrives within :data:`LINGER_S`. So a batch of short cells grows with the cells in
    flight (``--concurrency``): about concurrency / (2 x CPUs).
    A batch is rerun whole if its worker dies; a cancel fails what waits here and
    cancels the tasks.
    """

    def __init__(self, ray: Any, run_cells: Callable[..., list[Any]], *,
                 max_retries: int) -> None:
        self.ray = ray
        self.slots = 1  # the cluster's CPUs (:meth:`_count_cpus`)
        self._counted = -float("inf")
        self._cell_s: float | None = None  # a cell's mean seconds on a worker
        self.task = ray.remote(max_retries=max_retries, num_cpus=1)(run_cells)
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._done = threading.Condition()  # a task finished, or a cancel
        self._refs: set[Any] = set()
        self._cancelled = False
        self._thread = threading.Thread(target=self._loop, name="ray-submit", daemon=True)
        self._thread.start()

    def submit(self, args: tuple[Any, ...]) -> Future[Any]:
        """Queue one cell ``(config key, config ref, fields, config_dir, case files)``;
        the future resolves to (RunResult, files) or a Ray error."""
        future: Future[Any] = Future()
        self._queue.put((args, future))
        return future

    def _count_cpus(self) -> None:
        """Read the cluster's CPU count again every :data:`CPU_RECOUNT_S`: an autoscaler
        adds nodes for the tasks that wait, and more CPUs take more tasks."""
        if time.monotonic() - self._counted >= CPU_RECOUNT_S:
            with contextlib.suppress(Exception):  # keep the last count
                self.slots = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
            self._counted = time.monotonic()

    def batch_size(self) -> int:
        """Cells a task may take: :data:`BATCH_WORK_S` over a cell's mean time on the
        workers, within 1 and :data:`MAX_BATCH`. One until cells have been timed: long
        cells go one to a task, so records, progress and a driver kill's losses stay
        per cell, and a new node gets work at once."""
        if self._cell_s is None:
            return 1
        return max(1, min(MAX_BATCH, int(BATCH_WORK_S / max(self._cell_s, 1e-4))))

    def _time_cells(self, results: list[tuple[RunResult, Any]]) -> None:
        """Fold a task's cells' run times into the running mean (weight 0.2 a task)."""
        took = [r.latency_s for r, _ in results if r.latency_s is not None]
        if took:
            mean = sum(took) / len(took)
            self._cell_s = mean if self._cell_s is None else 0.8 * self._cell_s + 0.2 * mean

    def _take(self, batch: list[_Item], timeout: float) -> bool:
        """Move one waiting cell into ``batch``; False when none came (or closing)."""
        try:
            item = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return False
        if item is None:  # closing: let the loop see it
            self._queue.put(None)
            return False
        batch.append(item)
        return True

    def _gather(self, first: _Item) -> tuple[list[_Item], bool]:
        """The next batch, once fewer than two tasks per CPU are in flight; and whether
        the batcher was cancelled meanwhile."""
        self._count_cpus()
        with self._done:
            while len(self._refs) >= 2 * self.slots and not self._cancelled:
                self._done.wait()
            busy, cancelled = len(self._refs) >= self.slots, self._cancelled
        batch, most = [first], self.batch_size()
        while len(batch) < most and self._take(batch, 0.0):
            pass
        deadline = time.monotonic() + LINGER_S
        while busy and len(batch) < most and (left := deadline - time.monotonic()) > 0:
            if not self._take(batch, left):
                break
        return batch, cancelled

    def _loop(self) -> None:
        while (first := self._queue.get()) is not None:
            batch, cancelled = self._gather(first)
            if cancelled:
                for _, future in batch:
                    future.set_exception(CancelledError())
                continue
            cells, configs = [], {}
            for (key, config_ref, *rest), _ in batch:
                configs[key] = config_ref  # once per batch: a ref costs Ray bookkeeping
                cells.append((key, *rest))
            try:
                ref = self.task.remote(configs, cells)
            except Exception as exc:  # the cluster went away
                for _, future in batch:
                    future.set_exception(exc)
                continue
            with self._done:
                self._refs.add(ref)
                cancelled = self._cancelled
            if cancelled:  # cancel_all ran while this batch was being sent
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref)
            ref.future().add_done_callback(
                lambda done, ref=ref, batch=batch: self._resolve(done, ref, batch))

    def _resolve(self, done: Future[Any], ref: Any, batch: list[_Item]) -> None:
        with self._done:
            self._refs.discard(ref)
            self._done.notify_all()
        error = done.exception()
        if error is not None:
            for _, future in batch:
                future.set_exception(error)
            return
        results = done.result()
        self._time_cells(results)
        for (_, future), result in zip(batch, results, strict=True):
            future.set_result(result)

    def cancel_all(self) -> None:
        """Fail the cells waiting here and cancel every task in flight (the worker stops
        the agent's processes); nothing is submitted after."""
        with self._done:
            self._cancelled = True
            refs = list(self._refs)
            self._done.notify_all()
        waiting: list[_Item] = []
        while self._take(waiting, 0.0):
            pass
        for _, future in waiting:
            future.set_exception(CancelledError())
        for ref in refs:
            with contextlib.suppress(Exception):  # already finished, or the cluster is gone
                self.ray.cancel(ref)

    def close(self) -> None:
        """Stop the submitting thread (after the engine is done with the batcher)."""
        self._queue.put(None)
        self._thread.join(timeout=5)
