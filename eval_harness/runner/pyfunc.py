"""``python`` runner: call ``module:function`` (the config dir is on sys.path).

The function receives ``(input, context)`` where context is a dict with ``model``,
``effort``, ``subagent_model``, ``case_id``, ``condition_id``, ``levels``, ``replication``
and ``output_dir``. It returns a string (the answer) or a mapping ``{output, cost_usd?,
usage?, steps?}``. An exception ends the cell errored with its message; raising
:class:`TransientError` asks for a retry.

Isolation (``runner.isolate``, default true): the call runs in a persistent child process
(:mod:`eval_harness._util.isolated_calls`), so ``os._exit`` / ``sys.exit`` / a crash in user code is an
errored cell with a reason and the run goes on; a call past ``execution.timeout`` (or
cancelled by Ctrl-C / SIGTERM) kills its child. Arguments and return values cross a pipe,
so they must pickle, and module-level state lives in the children (one per concurrent
cell), not in this process.

``isolate: false`` calls in-process: each call runs in its own daemon thread and the worker
waits at most ``execution.timeout`` seconds (``timeout after Ns``); Python cannot stop a
thread, so an abandoned call runs on unobserved; an ``os._exit`` ends the whole run.
"""
from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from eval_harness._util.time_limit import call_with_timeout
from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError
from eval_harness.runner.cli import fill_from_reply
from eval_harness.runner.contract import RunRequest, RunResult, register


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
        self._probed = False
        self._cancel = threading.Event()

    def cancel_all(self) -> None:
        """Stop waiting for the calls in flight (they end on their own, unobserved)."""
        self._cancel.set()

    @property
    def isolated(self) -> bool:
        """Whether calls run in a child process (``runner.isolate``, default true)."""
        runner = self.config.runner
        return True if runner is None else runner.isolate

    def preflight(self, config_dir: Path) -> Callable[..., Any] | None:
        """Import the function (once; in a child when isolated, so module-level code that
        exits cannot end the run); the engine calls this before any cell runs, so a bad
        ``runner.function`` is a ConfigError (exit 2), not one errored cell per case."""
        runner = self.config.runner
        spec = runner.function or "" if runner else ""
        if self.isolated:
            if not self._probed:
                self._probe(spec, str(config_dir))
                self._probed = True
            return None
        if self._func is None:
            self._func = load_function(spec, str(config_dir))
        return self._func

    def _probe(self, spec: str, config_dir: str) -> None:
        from eval_harness._util.isolated_calls import POOL

        module, _, function = spec.partition(":")
        out = POOL.call(("probe", module, function, config_dir))
        if out.status == "ok":
            return
        if out.error_type == "TypeError":
            raise ConfigError(f"{spec} is not a function", path="runner.function")
        detail = out.message if out.error_type == "ImportError" else out.reason()
        raise ConfigError(detail if detail.startswith("cannot import") else
                          f"cannot import {module}: {detail}", path="runner.function")

    def _call(self, request: RunRequest, args: tuple[Any, ...]) -> tuple[str, Any, str]:
        """(status, value, reason): ok / transient / error / cancelled / timeout."""
        timeout = self.config.execution.timeout
        if self.isolated:
            from eval_harness._util.isolated_calls import POOL

            runner = self.config.runner
            module, _, function = (runner.function or "" if runner else "").partition(":")
            out = POOL.call(("call", module, function, str(request.config_dir), args, {}),
                            timeout, self._cancel)
            if out.status == "ok":
                return "ok", out.value, ""
            if out.status == "error":
                kind = "transient" if out.error_type == "TransientError" else "error"
                reason = (f"transient: {out.message}" if kind == "transient"
                          else f"{out.error_type}: {out.message}")
                return kind, None, reason
            return out.status, None, out.reason(timeout)
        func = self.preflight(request.config_dir)
        call = call_with_timeout(func, args, timeout, self._cancel,  # type: ignore[arg-type]
                                 name="python-runner-call")
        if not call.finished:
            return ("cancelled", None, "cancelled") if call.cancelled else (
                "timeout", None, f"timeout after {timeout:g}s")
        exc = call.error
        if isinstance(exc, TransientError):
            return "transient", None, f"transient: {exc}"
        if exc is not None:  # a failing function is a result, not a crash
            return "error", None, f"{type(exc).__name__}: {exc}"
        return "ok", call.value, ""

    def run(self, request: RunRequest) -> RunResult:
        """One call."""
        runner = self.config.runner
        self.preflight(request.config_dir)
        output_dir = request.case_dir / "output"
        context = {"model": request.model, "effort": request.effort,
                   "subagent_model": request.subagent_model, "case_id": request.case_id,
                   "condition_id": request.condition_id, "levels": request.levels,
                   "replication": request.replication, "output_dir": str(output_dir)}
        start = time.monotonic()
        status, value, reason = self._call(request, (dict(request.input), context))
        latency = time.monotonic() - start
        if status == "transient":
            return RunResult(latency_s=latency, failure="transient", reason=reason[:300])
        if status != "ok":  # a failing function is a result, not a crash
            return RunResult(latency_s=latency, failure="error", reason=reason[:300])
        result = RunResult(latency_s=latency)
        if isinstance(value, Mapping):
            fill_from_reply(result, dict(value), runner.pricing if runner else None, request.model)
        else:
            result.output = "" if value is None else str(value)
        return result


@register("python")
def _factory(config: EvalConfig) -> PythonRunner:
    return PythonRunner(config)
