"""Spend cap and per-cell limits (docs/cost.md, "Caps"), owned by the engine.

:class:`SpendTracker` — ``--max-spend USD`` / ``execution.max_spend``: before a cell is
launched, the tracker checks ``spent + (in flight + 1) × per-cell estimate <= cap``; when
that fails no new cell is launched, the cells in flight finish and are kept, and the
engine raises :class:`~eval_harness.errors.BudgetExhausted` (exit 3). The estimate is the
mean cost of the cells this run has paid for (runner and judges; cache hits cost nothing
and are left out of the mean). Until the first paid cell has finished there is no estimate,
so only one cell is in flight: the cap is never overshot by a first wave of blind launches.
The cap counts this invocation's spend only, so rerunning the same command resumes with a
fresh allowance.

:func:`check_cell_limits` — ``execution.max_tokens_per_cell`` / ``max_cost_per_cell``: a
call that used more is errored with the reason (its answer is kept in outputs.json).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from eval_harness.runner.base import RunResult


class SpendTracker:
    """Thread-safe spend accounting against an optional cap."""

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.spent = 0.0
        self.saved = 0.0
        self.paid_cells = 0  # cells whose cost was paid and known
        self.unpriced = 0  # finished cells without a known cost
        self.inflight = 0
        self.finished = 0
        self._cond = threading.Condition()

    def estimate(self) -> float | None:
        """Mean paid cost per cell so far (None before any is known)."""
        return self.spent / self.paid_cells if self.paid_cells else None

    def launch(self, stop: threading.Event) -> bool:
        """Reserve a launch; False when the cap would be passed (or ``stop`` is set)."""
        with self._cond:
            if self.cap is None:
                self.inflight += 1
                return True
            while (self.paid_cells == 0 and self.unpriced == 0 and self.inflight > 0
                   and not stop.is_set()):
                self._cond.wait(0.25)  # probe: the first paid cell tells what a cell costs
            if stop.is_set():
                return False
            est = self.estimate() or 0.0
            if self.spent + (self.inflight + 1) * est > self.cap or self.spent >= self.cap:
                return False
            self.inflight += 1
            return True

    def cancel(self) -> None:
        """A reserved launch that ran nothing."""
        with self._cond:
            self.inflight -= 1
            self._cond.notify_all()

    def settle(self, paid: float | None, saved: float = 0.0) -> None:
        """A launched cell finished: ``paid`` USD this run (None: unknown), ``saved``
        USD served from the cache."""
        with self._cond:
            self.inflight -= 1
            self.finished += 1
            self.saved += saved
            if paid is None:
                self.unpriced += 1
            elif paid > 0:
                self.spent += paid
                self.paid_cells += 1
            self._cond.notify_all()

    def left_line(self, not_run: int) -> str:
        """One line: the cap, what was spent, what is left and about what it costs."""
        est = self.estimate()
        more = f" (about ${not_run * est:,.2f} more at ${est:,.4f} per cell)" if est else ""
        return (f"spend cap ${self.cap:,.2f} reached: ${self.spent:,.2f} spent by this run; "
                f"{not_run} cells left{more}")


def cell_costs(record: Mapping[str, Any]) -> tuple[float | None, float]:
    """(USD paid by this run for the cell, USD served from the cache) from its record:
    the runner's cost plus every judge's, cache hits counted as saved."""
    paid: float | None = None
    saved = 0.0
    cost = record.get("cost_usd")
    if isinstance(cost, (int, float)):
        if record.get("cache_hit"):
            saved += cost
            paid = 0.0  # known: nothing was paid for it
        else:
            paid = float(cost)
    for score in (record.get("scores") or {}).values():
        jc = score.get("cost_usd") if isinstance(score, Mapping) else None
        if isinstance(jc, (int, float)):
            if score.get("cache_hit") or score.get("cached"):
                saved += jc
            else:
                paid = (paid or 0.0) + float(jc)
    return paid, saved


def check_cell_limits(result: RunResult, execution: Any) -> None:
    """Error ``result`` when it used more tokens or cost than the per-cell limits allow."""
    if not result.ok:
        return
    max_tokens = getattr(execution, "max_tokens_per_cell", None)
    max_cost = getattr(execution, "max_cost_per_cell", None)
    tokens = result.total_tokens()
    if max_tokens is not None and tokens is not None and tokens > max_tokens:
        result.failure = "error"
        result.reason = (f"over execution.max_tokens_per_cell: {tokens:,} tokens > "
                         f"{max_tokens:,}")
    elif max_cost is not None and result.cost_usd is not None and result.cost_usd > max_cost:
        result.failure = "error"
        result.reason = (f"over execution.max_cost_per_cell: ${result.cost_usd:.4f} > "
                         f"${max_cost:.4f}")
