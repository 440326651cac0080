"""What one call of a runner produced: the record type the runners return, the engine
retries and judges, and the store writes (``outputs.json``, ``command.json``, logs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from eval_harness.trace.model import Trace

Failure = Literal["none", "error", "transient", "quota", "auth"]


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
