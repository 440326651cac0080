"""Adaptive concurrency per endpoint (AIMD), owned by the engine (docs/cost.md).

Every call to one endpoint (the base URL of an openai / anthropic / http runner) takes a
slot of that endpoint's :class:`AdaptiveLimiter`. The level starts at ``--concurrency``;

- a 429 / 529 reply halves it (multiplicative decrease, never below 1) — once per
  *epoch*: replies to calls launched before the last decrease do not halve it again, so
  one burst of rejections is one halving, not one per rejected call;
- after ``level`` successes in a row it grows by one (additive increase), up to the
  configured concurrency;
- a ``Retry-After`` holds every new call to that endpoint until it has passed.

:class:`LimitedRunner` retries a rate-limited call itself, waiting on the limiter, for up
to :data:`RATE_LIMIT_PATIENCE_S` seconds before handing the 429 to the engine's ordinary
retries: back-pressure is not a failure, so it does not use up ``execution.retries``.
The limiters live in the driver process (the engine's :class:`Limiters`), so the level is
global across workers.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from eval_harness.cache.keys import public_endpoint
from eval_harness.runner.contract import Runner, RunRequest, RunResult

#: seconds a call keeps retrying rate-limited replies before the engine's retries take over
RATE_LIMIT_PATIENCE_S = 120.0
#: longest single Retry-After honoured (a server asking for an hour is capped)
MAX_HOLD_S = 60.0


@dataclass(frozen=True)
class Ticket:
    """A slot taken at one epoch."""

    epoch: int


class AdaptiveLimiter:
    """AIMD limit on calls in flight to one endpoint (module doc)."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.level = self.ceiling
        self.lowest = self.ceiling
        self.inflight = 0
        self.epoch = 0
        self.successes = 0
        self.rate_limited = 0
        self.hold_until = 0.0
        self._cond = threading.Condition()

    def acquire(self, stop: threading.Event) -> Ticket | None:
        """Wait for a slot (None when ``stop`` was set meanwhile)."""
        with self._cond:
            while not stop.is_set():
                hold = self.hold_until - time.monotonic()
                if hold <= 0 and self.inflight < self.level:
                    self.inflight += 1
                    return Ticket(self.epoch)
                self._cond.wait(min(max(hold, 0.01), 0.25) if hold > 0 else 0.25)
            return None

    def release(self, ticket: Ticket, *, rate_limited: bool,
                retry_after: float | None = None) -> None:
        """Give the slot back and adapt the level to how the call went."""
        with self._cond:
            self.inflight -= 1
            if rate_limited:
                self.rate_limited += 1
                if ticket.epoch == self.epoch:
                    self.level = max(1, self.level // 2)
                    self.lowest = min(self.lowest, self.level)
                    self.epoch += 1
                    self.successes = 0
                if retry_after:
                    self.hold_until = max(self.hold_until,
                                          time.monotonic() + min(retry_after, MAX_HOLD_S))
            else:
                self.successes += 1
                if self.successes >= self.level and self.level < self.ceiling:
                    self.level += 1
                    self.successes = 0
            self._cond.notify_all()


class Limiters:
    """One limiter per endpoint, created on first use."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self._lock = threading.Lock()
        self._by_endpoint: dict[str, AdaptiveLimiter] = {}

    def get(self, endpoint: str) -> AdaptiveLimiter:
        """The endpoint's limiter."""
        with self._lock:
            lim = self._by_endpoint.get(endpoint)
            if lim is None:
                lim = self._by_endpoint[endpoint] = AdaptiveLimiter(self.ceiling)
            return lim

    def describe(self) -> str:
        """``concurrency 4/8`` (the most throttled endpoint), or "" while none throttled."""
        with self._lock:
            lims = list(self._by_endpoint.values())
        throttled = [lim for lim in lims if lim.rate_limited]
        if not throttled:
            return ""
        low = min(throttled, key=lambda lim: lim.level)
        return f"concurrency {low.level}/{low.ceiling}"

    def snapshot(self) -> dict[str, dict[str, int]]:
        """Per endpoint: current and lowest level, rate-limited replies (for summaries)."""
        with self._lock:
            return {e: {"level": lim.level, "lowest": lim.lowest, "ceiling": lim.ceiling,
                        "rate_limited": lim.rate_limited}
                    for e, lim in self._by_endpoint.items()}


def endpoint_of(runner: Any, request: RunRequest) -> str | None:
    """The endpoint a runner's call goes to (None: not an HTTP runner)."""
    build = getattr(runner, "build", None)
    if callable(build):
        return public_endpoint(build(request).url)
    cfg = getattr(runner, "config", None)
    block: Any = getattr(cfg, "runner", None)
    url = getattr(block, "url", None)
    if getattr(block, "type", None) == "http" and url:
        return public_endpoint(str(url))
    return None


class LimitedRunner:
    """``inner`` whose calls take slots of their endpoint's limiter (module doc)."""

    def __init__(self, inner: Runner, limiters: Limiters, stop: threading.Event) -> None:
        self.inner = inner
        self.limiters = limiters
        self.stop = stop
        self._endpoint: str | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def cancel_all(self) -> None:
        """Stop the inner runner's calls."""
        self.inner.cancel_all()

    def run(self, request: RunRequest) -> RunResult:
        """One call, retried while rate-limited (up to RATE_LIMIT_PATIENCE_S)."""
        if self._endpoint is None:  # one URL per runner (its config fixes it)
            self._endpoint = endpoint_of(self.inner, request) or ""
        if not self._endpoint:
            return self.inner.run(request)
        # here, not at import: the engine (and so --dry-run) must not load the HTTP stack
        from eval_harness.runner.httpcall import is_rate_limited

        limiter = self.limiters.get(self._endpoint)
        deadline = time.monotonic() + RATE_LIMIT_PATIENCE_S
        tries = 0
        while True:
            ticket = limiter.acquire(self.stop)
            if ticket is None:
                return RunResult(failure="transient", reason="cancelled")
            limited = False
            try:
                result = self.inner.run(request)
                limited = is_rate_limited(result.failure, result.reason)
            finally:
                limiter.release(ticket, rate_limited=limited,
                                retry_after=result.retry_after if limited else None)
            if not limited or self.stop.is_set() or time.monotonic() >= deadline:
                break
            tries += 1
            # the hold (Retry-After) is waited in acquire; jitter spreads the retries
            self.stop.wait(min(8.0, 0.05 * 2 ** min(tries, 8)) * random.uniform(0.5, 1.5))
        if tries:
            result.extra_attempts += tries
            result.notes.append(f"rate-limited {tries} time(s) at {self._endpoint}; "
                                "retried under the adaptive concurrency limit")
        return result


def with_limiter(runner: Runner, limiters: Limiters | None, stop: threading.Event) -> Runner:
    """``runner`` behind the endpoint limiters (unchanged when there are none)."""
    return runner if limiters is None else LimitedRunner(runner, limiters, stop)
