"""The one retry policy (eval_harness/_util/retrying.py): jittered exponential backoff, the
server's Retry-After a floor (capped), only transient results retried, and no retry or
wait past an abort."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from eval_harness._util import retrying
from eval_harness._util.retrying import CURRENT_STOP, Backoff, call_with_backoff, retry_wait


def test_wait_is_exponential_jittered_capped_with_retry_after_a_floor() -> None:
    b = Backoff(initial=1.0, maximum=10.0, max_retry_after=30.0)
    for n, low in ((1, 1.0), (2, 2.0), (3, 4.0)):
        waits = {retry_wait(b, n, None) for _ in range(50)}
        assert all(low <= w <= low + 1.0 for w in waits) and len(waits) > 40  # jittered
    assert retry_wait(b, 9, None) == 10.0  # capped
    assert retry_wait(b, 1, 7.5) == 7.5  # Retry-After is a floor...
    assert 2.0 <= retry_wait(b, 2, 0.5) <= 3.0  # ...never shortens the backoff
    assert retry_wait(b, 1, 1000.0) == 30.0  # and is capped


class _Calls:
    def __init__(self, results: list[str]) -> None:
        self.results, self.n = results, 0

    def __call__(self) -> str:
        self.n += 1
        return self.results.pop(0)


def _no_wait(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, Any]]:
    seen: list[tuple[int, Any]] = []

    def spy(backoff: Backoff, n: int, after: float | None) -> float:
        seen.append((n, after))
        return 0.0

    monkeypatch.setattr(retrying, "retry_wait", spy)
    return seen


def _go(calls: _Calls, retries: int, stop: threading.Event | None = None) -> tuple[str, int]:
    return call_with_backoff(calls, transient=lambda r: r.startswith("t"),
                             retry_after=lambda r: float(r[1:]) if r[1:] else None,
                             retries=retries, backoff=Backoff(), stop=stop)


def test_only_transient_results_are_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _no_wait(monkeypatch)
    assert _go(_Calls(["ok"]), 3) == ("ok", 1)
    assert _go(_Calls(["t", "t2.5", "ok"]), 3) == ("ok", 3)
    assert seen == [(1, None), (2, 2.5)]  # each wait sees the previous reply's Retry-After
    assert _go(_Calls(["t", "t", "t", "t", "ok"]), 3) == ("t", 4)  # out of retries: last
    assert _go(_Calls(["t", "ok"]), 0) == ("t", 1)


def test_an_abort_ends_retries_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    stop.set()
    calls = _Calls(["t", "ok"])
    assert _go(calls, 5, stop) == ("t", 1) and calls.n == 1
    # the engine's stop event reaches a caller that was not handed one (a judge in a cell)
    token = CURRENT_STOP.set(stop)
    try:
        calls = _Calls(["t", "ok"])
        assert _go(calls, 5) == ("t", 1) and calls.n == 1
    finally:
        CURRENT_STOP.reset(token)
    seen = _no_wait(monkeypatch)
    assert _go(_Calls(["t", "ok"]), 5) == ("ok", 2) and seen  # no stop: retried


def test_an_abort_during_a_long_wait_wakes_the_sleeper() -> None:
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    calls = _Calls(["t3600"] * 3)  # Retry-After: an hour
    result = call_with_backoff(calls, transient=lambda r: True, retry_after=lambda r: 3600.0,
                               retries=2, backoff=Backoff(max_retry_after=3600.0), stop=stop)
    assert result == ("t3600", 1)  # returned on the abort, not after an hour
