"""The Ray executor's batcher on the shared local cluster (tests/runner/conftest.py): short
cells travel many to a task, long ones one to a task, every cell's result comes back once
and to its own future, and a cancel fails what waits and stops what runs. The task is a
closure (sent by value) standing in for the worker's ``_run_cells``. Nothing is timed."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import CancelledError
from typing import Any

import pytest

from eval_harness.runner.contract import RunResult
from eval_harness.runner.ray_batcher import BATCH_WORK_S, MAX_BATCH, Batcher

ray = pytest.importorskip("ray")  # the `ray` extra; .ci/run installs it, so CI never skips


@pytest.fixture(scope="module")
def connected(cluster: str) -> Iterator[None]:
    ray.init(address=cluster)
    try:
        yield
    finally:
        ray.shutdown()


def _cells_taking(seconds: float, busy: float | None = None) -> Any:
    """A task: each cell ``(key, n)`` reports ``seconds`` as its time on the worker
    (and sleeps ``busy`` seconds), returning (result, size of its batch)."""
    def run_cells(configs: dict[str, Any], cells: list[tuple[Any, ...]]) -> list[Any]:
        import time

        out = []
        for key, n in cells:
            assert key in configs
            if busy:
                time.sleep(busy)
            out.append((RunResult(output=str(n), latency_s=seconds), len(cells)))
        return out
    return run_cells


def _batcher(task: Any) -> Batcher:
    return Batcher(ray, task, max_retries=0)


def test_short_cells_go_many_to_a_task_each_result_to_its_own_cell(connected: None) -> None:
    batcher = _batcher(_cells_taking(0.002))
    try:
        futures = [batcher.submit(("k", None, n)) for n in range(300)]
        got = [f.result(timeout=300) for f in futures]
    finally:
        batcher.close()
    assert [r.output for r, _ in got] == [str(n) for n in range(300)]
    sizes = [size for _, size in got]
    assert max(sizes) == min(MAX_BATCH, int(BATCH_WORK_S / 0.002)) > 1
    assert sizes[0] == 1  # before any cell has been timed: one to a task
    assert len(set(sizes)) > 1 and sum(1 / s for s in sizes) < 40  # tasks, not cells


def test_long_cells_go_one_to_a_task(connected: None) -> None:
    batcher = _batcher(_cells_taking(BATCH_WORK_S * 2, busy=0.05))
    try:
        got = [f.result(timeout=300) for f in
               [batcher.submit(("k", None, n)) for n in range(12)]]
    finally:
        batcher.close()
    assert [r.output for r, _ in got] == [str(n) for n in range(12)]
    assert {size for _, size in got} == {1}


def test_cancel_fails_the_waiting_cells_and_stops_the_running_ones(connected: None) -> None:
    started = _batcher(_cells_taking(0.001))
    try:  # the workers are up (a cell ran) before the slow cells go out
        started.submit(("k", None, 0)).result(timeout=300)
    finally:
        started.close()
    batcher = _batcher(_cells_taking(600.0, busy=600.0))
    try:
        futures = [batcher.submit(("k", None, n)) for n in range(10)]
        batcher.cancel_all()
        errors = []
        for future in futures:
            with pytest.raises((CancelledError, ray.exceptions.TaskCancelledError)) as err:
                future.result(timeout=120)  # long before any 600 s cell could end
            errors.append(err.type)
        # the 10 waited here or ran: some may be Ray's cancels, the rest never left
        assert CancelledError in errors
        assert batcher.submit(("k", None, 99)).exception(timeout=120) is not None
    finally:
        batcher.close()
