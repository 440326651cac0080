"""Spend cap and per-cell limits (docs/cost.md, "Caps"), owned by the engine.

:class:`SpendTracker` — ``--max-spend USD`` / ``execution.max_spend``: a **reservation**.
Before a cell is launched the engine works out its worst case (:func:`cell_worst_case`:
the most the cell can add to the spend) and the tracker launches it only when
``spent + reserved (the in-flight cells' worst cases) + this worst case <= cap``; else it
waits for a cell in flight to settle (its reservation is replaced by what it cost) and,
with nothing in flight and still no room, refuses: the engine raises
:class:`~eval_harness.errors.BudgetExhausted` (exit 3) after the cells in flight finish.
So with known worst cases the spend never passes the cap, whatever the cost profile.
A cell whose worst case is unknown (a runner stating its own cost with no per-cell limit)
runs **alone**, launched while ``spent + the dearest cell so far <= cap``: the spend stops
within that one cell's cost of the cap. A cell that cost more than its worst case (a
wrong price, a server billing past ``max_tokens``) makes every later cell run alone.
The cap counts this invocation's spend only, so rerunning resumes with a fresh allowance.

:func:`check_cell_limits` — ``execution.max_tokens_per_cell`` / ``max_cost_per_cell``: a
call that used more is errored with the reason (its answer is kept in outputs.json).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_harness.runner.contract import RunResult

#: bytes of a judge prompt beyond the case, the answer and the template (system prompt,
#: scale, fences; generous)
JUDGE_OVERHEAD = 16_384
#: reply tokens assumed for a runner whose reply has no token limit (judge input only)
UNBOUNDED_REPLY_TOKENS = 32_768


@dataclass(frozen=True)
class Reservation:
    """One launched cell's hold on the cap: ``amount`` USD held; ``alone``: it runs with
    nothing else in flight (its worst case is unknown)."""

    amount: float = 0.0
    alone: bool = False


class SpendTracker:
    """Thread-safe spend accounting against an optional cap (module doc)."""

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.spent = 0.0
        self.saved = 0.0
        self.paid_cells = 0  # cells whose cost was paid and known
        self.unpriced = 0  # finished cells without a known cost
        self.inflight = 0
        self.finished = 0
        self.reserved = 0.0  # sum of the in-flight cells' worst cases
        self.dearest = 0.0  # the most one cell has cost so far
        self.bounds_broken = False  # a cell cost more than its worst case
        self.blocked: float | None = None  # the worst case that found no room
        self._alone = 0
        self._cond = threading.Condition()

    def estimate(self) -> float | None:
        """Mean paid cost per cell so far (None before any is known)."""
        return self.spent / self.paid_cells if self.paid_cells else None

    def launch(self, stop: threading.Event, worst: float | None = None) -> Reservation | None:
        """Reserve a launch for a cell that can cost at most ``worst`` USD (None: unknown);
        None when the cap has no room for it (or ``stop`` is set)."""
        with self._cond:
            if self.cap is None:
                self.inflight += 1
                return Reservation()
            while not stop.is_set():
                alone = worst is None or self.bounds_broken
                if self._alone or (alone and self.inflight):
                    self._cond.wait(0.25)  # an unbounded cell runs with nothing beside it
                    continue
                need = self.dearest if alone else max(0.0, worst or 0.0)
                if self.spent < self.cap and self.spent + self.reserved + need <= self.cap:
                    self.inflight += 1
                    self.reserved += need
                    self._alone += alone
                    return Reservation(need, alone)
                if not self.inflight:
                    self.blocked = need
                    return None
                self._cond.wait(0.25)  # a cell in flight may cost less than it holds
            return None

    def _release(self, held: Reservation | None) -> None:
        held = held or Reservation()
        self.inflight -= 1
        self.reserved = max(0.0, self.reserved - held.amount)
        self._alone -= held.alone
        self._cond.notify_all()

    def cancel(self, held: Reservation | None = None) -> None:
        """A reserved launch that ran nothing."""
        with self._cond:
            self._release(held)

    def settle(self, paid: float | None, saved: float = 0.0,
               held: Reservation | None = None) -> None:
        """A launched cell finished: ``paid`` USD this run (None: unknown), ``saved``
        USD served from the cache; its reservation ``held`` is released."""
        with self._cond:
            self.finished += 1
            self.saved += saved
            if paid is None:
                self.unpriced += 1
            elif paid > 0:
                self.spent += paid
                self.paid_cells += 1
                self.dearest = max(self.dearest, paid)
                if held is not None and not held.alone and paid > held.amount + 1e-12:
                    self.bounds_broken = True
            self._release(held)

    def left_line(self, not_run: int) -> str:
        """One line: the cap, what was spent, what is left and about what it costs."""
        est = self.estimate()
        more = f" (about ${not_run * est:,.2f} more at ${est:,.4f} per cell)" if est else ""
        room = ""
        if self.blocked is not None and self.cap is not None and (
                self.blocked > self.cap - self.spent):
            room = f"; the next cell may cost up to ${self.blocked:,.4f}"
        return (f"spend cap ${self.cap:,.2f} reached: ${self.spent:,.2f} spent by this run; "
                f"{not_run} cells left{more}{room}")


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


def cell_worst_case(runner: Any, request: Any, case_bytes: int) -> float | None:
    """The most one cell can add to the spend (USD), or None when it cannot be known:
    the runner's call — ``runner.reply_bound(request)`` (openai / anthropic: the request
    bytes as input tokens plus ``max_tokens`` at the model's price; claude-code:
    ``max_budget_usd``; a cache hit: 0), capped by ``execution.max_cost_per_cell`` — plus
    the LLM judges' (:func:`judges_worst_case`). A call without a price counts 0 in the
    spend, so it reserves 0 too."""
    cfg = request.config
    bound = getattr(runner, "reply_bound", None)
    found = bound(request) if callable(bound) else None
    usd, reply_tokens = found if found is not None else (None, None)
    limit = cfg.execution.max_cost_per_cell
    if limit is not None:
        usd = limit if usd is None else min(usd, limit)
    if usd is None:
        return None
    return usd + judges_worst_case(cfg, request.config_dir, case_bytes, reply_tokens)


def judges_worst_case(cfg: Any, config_dir: Path | None, case_bytes: int,
                      reply_tokens: int | None) -> float:
    """USD the LLM judges of one cell can cost: per judge and sample, ``max_tokens`` out
    and, in, every byte of the case, the template and the overhead plus twice the runner's
    reply token limit (a token is at least a byte; the answer is re-tokenised)."""
    from eval_harness.judges.llm.providers import parse_model
    from eval_harness.pricing.table import Rates, resolve_rates

    total = 0.0
    for block in cfg.judges:
        name = block.model or cfg.models.judge
        if not block.is_llm or block.pairwise is not None or not name:
            continue
        found = ((Rates(*block.cost_per_mtok), "config") if block.cost_per_mtok is not None
                 else resolve_rates(parse_model(name).model))
        if found is None:
            continue  # unpriced: its cost counts as 0
        template = len((block.prompt or "").encode("utf-8"))
        if block.prompt_file and config_dir is not None:
            with contextlib.suppress(OSError):
                template = (Path(config_dir) / str(block.prompt_file)).stat().st_size
        tokens = (JUDGE_OVERHEAD + case_bytes + template
                  + 2 * (reply_tokens or UNBOUNDED_REPLY_TOKENS))
        total += block.samples * call_worst(found[0], tokens, block.max_tokens)
    return total


def call_worst(rates: Any, input_tokens: int, output_tokens: int) -> float:
    """USD of a call of at most ``input_tokens`` in (billed at the dearest input rate:
    plain or cache write) and ``output_tokens`` out."""
    from eval_harness.pricing.table import Usage, call_cost

    return max(call_cost(rates, Usage(input_tokens, output_tokens)),
               call_cost(rates, Usage(0, output_tokens, cache_write=input_tokens)))
