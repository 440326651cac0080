"""The runner contract: one request in, one result out, behind a name -> factory registry.

A runner never raises for a failed call: it returns a :class:`RunResult` whose ``failure``
says what went wrong (``error`` ends the cell errored; ``transient`` is retried by the
engine; ``quota`` / ``auth`` make the engine stop launching and exit 3). Cost stays
``None`` unless the application or a configured price list states it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from eval_harness.config.models import EvalConfig
from eval_harness.trace.model import Trace

Failure = Literal["none", "error", "transient", "quota", "auth"]
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


@dataclass
class RunResult:
    """What one call produced (the DESIGN.md ``outputs`` dict is built from it)."""

    output: str = ""
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    latency_s: float | None = None
    cost_usd: float | None = None
    cost_source: str | None = None  # reported | config | table:<date> (eval_harness.pricing)
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens: int | None = None
    trace: Trace | None = None  # the reported steps, clipped and masked (eval_harness.trace)
    files: dict[str, str] = field(default_factory=dict)
    modified_files: dict[str, str] = field(default_factory=dict)  # workspace edits
    failure: Failure = "none"
    reason: str | None = None
    retry_after: float | None = None  # seconds, from a Retry-After header
    argv: list[str] | None = None  # masked; written to command.json
    raw: Any = None  # the parsed application reply, kept in outputs.json
    notes: list[str] = field(default_factory=list)  # e.g. a log cut at its cap (record.notes)
    step_results: dict[str, dict[str, Any]] | None = None  # execution.steps: id -> result
    cache_hit: bool = False  # served from the model-call cache (eval_harness.cache)
    extra_attempts: int = 0  # calls a wrapper made beyond one (rate-limit retries)

    @property
    def ok(self) -> bool:
        """True when the call produced an answer."""
        return self.failure == "none"

    @property
    def steps(self) -> list[dict[str, Any]] | None:
        """The trace as JSON step dicts (what judges see as ``outputs["trace"]``)."""
        return None if self.trace is None else self.trace.to_json()["steps"]

    @property
    def tool_calls(self) -> int | None:
        """Number of tool steps (at any depth) when a trace was reported."""
        if self.trace is None:
            return None
        return sum(1 for s in self.trace.walk() if s.kind == "tool")

    def total_tokens(self) -> int | None:
        """Reported total, else input + output when both are known."""
        if self.tokens is not None:
            return self.tokens
        if self.input_tokens is not None and self.output_tokens is not None:
            return self.input_tokens + self.output_tokens
        return None


class Runner(Protocol):
    """Executes one cell. Must be thread-safe: the engine calls it from worker threads."""

    def run(self, request: RunRequest) -> RunResult:
        """Run one cell; never raise for an application failure."""
        ...

    def cancel_all(self) -> None:
        """Stop every call in flight (Ctrl-C, quota abort); a no-op where impossible."""
        ...


RunnerFactory = Callable[[EvalConfig], Runner]
_REGISTRY: dict[str, RunnerFactory] = {}


def register(name: str) -> Callable[[RunnerFactory], RunnerFactory]:
    """Decorator: register a runner factory under ``name`` (``runner.type``)."""

    def wrap(factory: RunnerFactory) -> RunnerFactory:
        _REGISTRY[name] = factory
        return factory

    return wrap


def runner_names() -> list[str]:
    """Registered runner types."""
    _load_builtins()
    return sorted(_REGISTRY)


def build_runner(config: EvalConfig) -> Runner:
    """The runner for ``config.runner.type`` (cli when no runner block)."""
    from eval_harness.errors import ConfigError

    _load_builtins()
    name = config.runner.type if config.runner else "cli"
    factory = _REGISTRY.get(name)
    if factory is None:
        raise ConfigError(f"unknown runner type {name!r}", path="runner.type",
                          hint="one of " + ", ".join(sorted(_REGISTRY)))
    return factory(config)


def _load_builtins() -> None:
    # Importing the modules runs their @register decorators.
    from eval_harness.runner import (  # noqa: F401
        claude_code,
        cli,
        http,
        llm,
        pyfunc,
    )


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int | None, int | None, int | None]:
    """(input, output, total) from an OpenAI/Anthropic/agent ``usage`` mapping."""
    if not isinstance(usage, Mapping):
        return None, None, None

    def num(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            # a finite, non-negative count (JSON allows NaN / Infinity; they mean unknown)
            if (isinstance(value, (int, float)) and not isinstance(value, bool)
                    and math.isfinite(value) and value >= 0):
                return int(value)
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
