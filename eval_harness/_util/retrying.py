"""The one retry policy: cell calls (``runner/cell.py``) and LLM-judge requests
(``judges/llm/chat_call.py``) both go through :func:`call_with_backoff`.

Only results the caller calls transient are retried, up to ``retries`` more times, waiting
``max(Retry-After, min(maximum, initial·2^(n−1) + U(0, initial)))`` before retry ``n``
(exponential backoff with jitter, so many callers hit by one 429 do not come back in step;
the server's ``Retry-After``, capped at ``max_retry_after``, is a floor), and never past an
abort: the stop event (the engine's, set on Ctrl-C, SIGTERM or a quota stop) wakes the
sleeper and ends the retries, returning the last result.
"""

from __future__ import annotations

import contextvars
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

#: the stop event of the engine whose worker thread is running (set by the engine): a
#: judge called deep inside a cell sees the abort without it being passed down
CURRENT_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "eval_harness_stop", default=None)


@dataclass(frozen=True)
class Backoff:
    """Retry waits, seconds."""

    initial: float = 1.0
    maximum: float = 60.0
    max_retry_after: float = 300.0  # never wait longer than this for one Retry-After


def retry_wait(backoff: Backoff, retry_number: int, retry_after: float | None) -> float:
    """Seconds before retry ``retry_number`` (1-based); see the module doc."""
    base = min(backoff.maximum,
               backoff.initial * 2 ** (retry_number - 1) + random.uniform(0, backoff.initial))
    if retry_after is not None and retry_after > 0:
        return max(base, min(retry_after, backoff.max_retry_after))
    return base


def call_with_backoff(call: Callable[[], T], *, transient: Callable[[T], bool],
                      retry_after: Callable[[T], float | None], retries: int,
                      backoff: Backoff, stop: threading.Event | None = None) -> tuple[T, int]:
    """Call until the result is not transient, ``retries`` retries were made, or ``stop``
    is set; return (last result, attempts). Exceptions from ``call`` propagate."""
    stop = stop if stop is not None else CURRENT_STOP.get()
    first = call()  # fast path: most calls succeed and need no retry machinery
    if not transient(first) or retries <= 0:
        return first, 1
    from tenacity import (
        RetryCallState,
        Retrying,
        retry_if_result,
        stop_after_attempt,
        stop_when_event_set,
    )

    event = stop or threading.Event()
    attempts = 1

    def once() -> T:
        nonlocal attempts
        attempts += 1
        return call()

    def wait(state: RetryCallState) -> float:
        outcome = state.outcome
        after = (retry_after(outcome.result()) if outcome is not None and not outcome.failed
                 else None)
        return retry_wait(backoff, state.attempt_number + 1, after)  # first retry was 1

    def last(state: RetryCallState) -> T:  # out of retries, or stopped: the last result
        return state.outcome.result() if state.outcome is not None else first

    def sleep(seconds: float) -> None:
        event.wait(seconds)  # an abort wakes the sleeper early

    sleep(retry_wait(backoff, 1, retry_after(first)))
    if event.is_set():
        return first, attempts
    retrying = Retrying(
        stop=stop_after_attempt(retries) | stop_when_event_set(event),
        wait=wait, retry=retry_if_result(transient), retry_error_callback=last,
        sleep=sleep, reraise=True)
    result: T = retrying(once)
    return result, attempts
