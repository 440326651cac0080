"""``python`` runner: call ``module:function`` in-process (the config dir is on sys.path).

The function receives ``(input, context)`` where context is a dict with ``model``,
``effort``, ``subagent_model``, ``case_id``, ``condition_id``, ``levels``, ``replication``
and ``output_dir``. It returns a string (the answer) or a mapping ``{output, cost_usd?,
usage?, steps?}``. An exception ends the cell errored with its message; raising
:class:`TransientError` asks for a retry. Timeouts cannot interrupt Python code in a thread:
keep functions bounded (or use the cli runner).
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError
from eval_harness.runner.base import RunRequest, RunResult, register
from eval_harness.runner.cli import fill_from_reply


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
        except ImportError as exc:
            raise ConfigError(f"cannot import {module_name}: {exc}", path="runner.function") from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise ConfigError(f"{spec} is not a function", path="runner.function")
    return func  # type: ignore[no-any-return]


class PythonRunner:
    """Calls a Python function per cell."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self._func: Callable[..., Any] | None = None

    def cancel_all(self) -> None:
        """Functions cannot be interrupted; they end on their own."""

    def run(self, request: RunRequest) -> RunResult:
        """One call."""
        runner = self.config.runner
        if self._func is None:
            self._func = load_function(runner.function or "" if runner else "",
                                       str(request.config_dir))
        output_dir = request.case_dir / "output"
        context = {"model": request.model, "effort": request.effort,
                   "subagent_model": request.subagent_model, "case_id": request.case_id,
                   "condition_id": request.condition_id, "levels": request.levels,
                   "replication": request.replication, "output_dir": str(output_dir)}
        start = time.monotonic()
        try:
            value = self._func(dict(request.input), context)
        except TransientError as exc:
            return RunResult(latency_s=time.monotonic() - start, failure="transient",
                             reason=f"transient: {exc}")
        except Exception as exc:  # a failing function is a result, not a crash
            return RunResult(latency_s=time.monotonic() - start, failure="error",
                             reason=f"{type(exc).__name__}: {exc}"[:300])
        result = RunResult(latency_s=time.monotonic() - start)
        if isinstance(value, Mapping):
            fill_from_reply(result, dict(value), runner.pricing if runner else None, request.model)
        else:
            result.output = "" if value is None else str(value)
        return result


@register("python")
def _factory(config: EvalConfig) -> PythonRunner:
    return PythonRunner(config)
