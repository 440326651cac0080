"""``python`` runner: call ``module:function`` in-process (the config dir is on sys.path).

The function receives ``(input, context)`` where context is a dict with ``model``,
``effort``, ``subagent_model``, ``case_id``, ``condition_id``, ``levels``, ``replication``
and ``output_dir``. It returns a string (the answer) or a mapping ``{output, cost_usd?,
usage?, steps?}``. An exception ends the cell errored with its message; raising
:class:`TransientError` asks for a retry.

Timeout: each call runs in its own daemon thread and the worker waits at most
``execution.timeout`` seconds; then the cell ends errored (``timeout after Ns``) and the
engine moves on. Python cannot stop a thread, so the abandoned call keeps running in the
background until it returns (its result is discarded); functions that can hang for good
belong in the cli runner, whose timeout kills the process. Ctrl-C / an abort stops the
wait the same way (``cancelled``).
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError
from eval_harness.runner.base import RunRequest, RunResult, register
from eval_harness.runner.cli import fill_from_reply
from eval_harness.timed import call_with_timeout


class TransientError(Exception):
    """Raised by a python-runner function to ask for a retry."""


_IMPORT_LOCK = threading.Lock()


def load_function(spec: str, config_dir: str) -> Callable[..., Any]:
    """Import ``module:function`` (the config directory is searched first)."""
    module_name, _, func_name = spec.partition(":")
    with _IMPORT_LOCK:
        if config_dir not in sys.path:
            sys.path.insert(0, config_dir)
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # missing, or failing at import (SyntaxError, a raise...)
            raise ConfigError(f"cannot import {module_name}: {type(exc).__name__}: {exc}",
                              path="runner.function") from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ConfigError(f"{spec} is not a function", path="runner.function")
    return func  # type: ignore[no-any-return]


class PythonRunner:
    """Calls a Python function per cell."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self._func: Callable[..., Any] | None = None
        self._cancel = threading.Event()

    def cancel_all(self) -> None:
        """Stop waiting for the calls in flight (they end on their own, unobserved)."""
        self._cancel.set()

    def preflight(self, config_dir: Path) -> Callable[..., Any]:
        """Import the function (once); the engine calls this before any cell runs, so a
        bad ``runner.function`` is a ConfigError (exit 2), not one errored cell per case."""
        if self._func is None:
            runner = self.config.runner
            self._func = load_function(runner.function or "" if runner else "", str(config_dir))
        return self._func

    def run(self, request: RunRequest) -> RunResult:
        """One call."""
        runner = self.config.runner
        func = self.preflight(request.config_dir)
        output_dir = request.case_dir / "output"
        context = {"model": request.model, "effort": request.effort,
                   "subagent_model": request.subagent_model, "case_id": request.case_id,
                   "condition_id": request.condition_id, "levels": request.levels,
                   "replication": request.replication, "output_dir": str(output_dir)}
        start = time.monotonic()
        timeout = self.config.execution.timeout
        call = call_with_timeout(func, (dict(request.input), context), timeout, self._cancel,
                                 name="python-runner-call")
        if not call.finished:
            return RunResult(latency_s=time.monotonic() - start, failure="error",
                             reason="cancelled" if call.cancelled else f"timeout after {timeout:g}s")
        latency = time.monotonic() - start
        exc = call.error
        if isinstance(exc, TransientError):
            return RunResult(latency_s=latency, failure="transient", reason=f"transient: {exc}")
        if exc is not None:  # a failing function is a result, not a crash
            return RunResult(latency_s=latency, failure="error",
                             reason=f"{type(exc).__name__}: {exc}"[:300])
        value = call.value
        result = RunResult(latency_s=latency)
        if isinstance(value, Mapping):
            fill_from_reply(result, dict(value), runner.pricing if runner else None, request.model)
        else:
            result.output = "" if value is None else str(value)
        return result


@register("python")
def _factory(config: EvalConfig) -> PythonRunner:
    return PythonRunner(config)
