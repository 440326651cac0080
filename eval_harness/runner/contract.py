"""The runner contract: one request in, one result out, behind a name -> factory registry.

A runner never raises for a failed call: it returns a :class:`RunResult` whose ``failure``
says what went wrong (``error`` ends the cell errored; ``transient`` is retried by the
engine; ``quota`` / ``auth`` make the engine stop launching and exit 3). Cost stays
``None`` unless the application or a configured price list states it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from eval_harness._util.numbers import run_number
from eval_harness.config.models import EvalConfig

# the record type of one call lives with the store that writes it (store/case_writer)
from eval_harness.store.run_result import Failure, RunResult

__all__ = ["FATAL_FAILURES", "Failure", "RunRequest", "RunResult", "Runner", "RunnerFactory",
           "price", "register", "tee_prefix", "usage_tokens"]

#: failures that abort the matrix (exit 3)
FATAL_FAILURES = ("quota", "auth")


@dataclass(frozen=True)
class RunRequest:
    """Everything a runner needs for one cell."""

    case_id: str
    input: dict[str, Any]  # resolved: case input with the condition's overrides merged
    condition_id: str
    levels: dict[str, Any]
    replication: int
    model: Any  # condition.model, else models.skill
    effort: Any
    subagent_model: Any
    config: EvalConfig  # effective config of the condition
    config_dir: Path
    case_dir: Path  # cases/<case-id>/ of this run: stdout.log / stderr.log go here
    case_files: Path | None = None  # the dataset's case folder, if any
    verbose: bool = False
    secrets: tuple[str, ...] = ()  # values masked wherever argv or headers are recorded


def tee_prefix(request: RunRequest) -> str | None:
    """The ``--verbose`` line prefix naming the cell, e.g. ``[m1,low r2 c07] ``; None when
    not verbose. Levels are in the matrix's factor order (several conditions run at once)."""
    if not request.verbose:
        return None
    levels = ",".join(str(v) for v in request.levels.values())
    return f"[{levels + ' ' if levels else ''}r{request.replication} {request.case_id}] "


class Runner(Protocol):
    """Executes one cell. Must be thread-safe: the engine calls it from worker threads."""

    def run(self, request: RunRequest) -> RunResult:
        """Run one cell; never raise for an application failure."""
        ...

    def cancel_all(self) -> None:
        """Stop every call in flight (Ctrl-C, quota abort); a no-op where impossible."""
        ...


RunnerFactory = Callable[[EvalConfig], Runner]
#: runner type -> factory, filled by the @register decorators (runner/runner_types.py imports
#: the builtin runners, then looks a type up here)
REGISTRY: dict[str, RunnerFactory] = {}


def register(name: str) -> Callable[[RunnerFactory], RunnerFactory]:
    """Decorator: register a runner factory under ``name`` (``runner.type``)."""

    def wrap(factory: RunnerFactory) -> RunnerFactory:
        REGISTRY[name] = factory
        return factory

    return wrap


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int | None, int | None, int | None]:
    """(input, output, total) from an OpenAI/Anthropic/agent ``usage`` mapping."""
    if not isinstance(usage, Mapping):
        return None, None, None

    def num(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            # a finite, non-negative count (JSON allows NaN / Infinity; they mean unknown)
            known = run_number(value)
            if known is not None and known >= 0:
                return int(known)
        return None

    inp = num("input_tokens", "prompt_tokens")
    out = num("output_tokens", "completion_tokens")
    total = num("total_tokens")
    if total is None and inp is not None and out is not None:
        total = inp + out
    return inp, out, total


def price(pricing: Mapping[str, list[float]] | None, model: Any,
          inp: int | None, out: int | None) -> float | None:
    """USD from ``runner.pricing`` (model -> [per 1M input, per 1M output]); None if unknown."""
    if not pricing or model is None or inp is None or out is None:
        return None
    rates = pricing.get(str(model))
    if rates is None or len(rates) != 2:
        return None
    from eval_harness.pricing.table import Rates, Usage, call_cost

    return call_cost(Rates(float(rates[0]), float(rates[1])), Usage(inp, out))
