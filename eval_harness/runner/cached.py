"""A runner behind the model-call cache (docs/cost.md).

Runners that can name their call (``cache_spec(request)``: the openai, anthropic and
claude-code runners) are wrapped; the others (cli, http, python: the user's own
application, which may be stateful) are not. A hit returns the stored result marked
``cache_hit``: its latency is not this run's (the record writes ``latency_s: null`` and
keeps the original as ``cached_latency_s``) and its cost is not spent (it counts as saved).
Only successful calls are stored: a failure is called again next time.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from eval_harness._util.file_modes import create_file
from eval_harness.cache.keys import call_key
from eval_harness.cache.store import CallCache
from eval_harness.runner.contract import Runner, RunRequest, RunResult
from eval_harness.trace.model import build_trace

#: RunResult fields kept in the cache (latency separately, argv re-derived per cell)
_FIELDS = ("output", "exit_code", "stdout", "stderr", "cost_usd", "cost_source",
           "input_tokens", "output_tokens", "tokens", "files", "modified_files",
           "raw", "notes")  # and the trace, as its JSON steps under "steps"


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _count(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0)


def _cost(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)
                         and math.isfinite(v) and v >= 0)


def _text_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str)
                                       for k, x in v.items())


#: what each stored field must be for the value to be replayed as a RunResult
_SHAPE: dict[str, Callable[[Any], bool]] = {
    "output": _text, "stdout": _text, "stderr": _text,
    "exit_code": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
    "cost_usd": _cost, "cost_source": lambda v: v is None or isinstance(v, str),
    "input_tokens": _count, "output_tokens": _count, "tokens": _count,
    "files": _text_map, "modified_files": _text_map, "raw": lambda v: True,
    "notes": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v),
    "steps": lambda v: v is None or (isinstance(v, list)
                                     and all(isinstance(s, dict) for s in v)),
}


def stored_result_shape(value: dict[str, Any]) -> bool:
    """True when ``value`` is a result this module stored: the answer and every field of
    the right type, and nothing else (another shape is a miss, never an answer)."""
    return ("output" in value and set(value) <= set(_SHAPE)
            and all(_SHAPE[name](v) for name, v in value.items()))


class CachedRunner:
    """``inner`` with lookups before and stores after each call."""

    def __init__(self, inner: Runner, cache: CallCache) -> None:
        self.inner = inner
        self.cache = cache

    def __getattr__(self, name: str) -> Any:  # preflight, build_argv, ...: the inner's
        return getattr(self.inner, name)

    def cancel_all(self) -> None:
        """Stop the inner runner's calls."""
        self.inner.cancel_all()

    def key(self, request: RunRequest) -> tuple[str, dict[str, Any]]:
        """(key, spec) of the cell's call."""
        spec = self.inner.cache_spec(request)  # type: ignore[attr-defined]
        return call_key(kind="runner", provider=spec["provider"], endpoint=spec["endpoint"],
                        model=spec["model"], request=spec["request"],
                        replication=request.replication, private=spec["private"],
                        secret=self.cache.identity_secret), spec

    def reply_bound(self, request: RunRequest) -> tuple[float, int | None] | None:
        """The inner runner's bound for the spend cap; a stored reply costs nothing."""
        inner = getattr(self.inner, "reply_bound", None)
        bound = inner(request) if callable(inner) else None
        if not self.cache.refresh and self.cache.peek(self.key(request)[0], _replayable) is not None:
            return 0.0, bound[1] if bound is not None else None
        return bound

    def run(self, request: RunRequest) -> RunResult:
        """The stored result, or the inner call (stored when it succeeded)."""
        key, spec = self.key(request)
        hit = self.cache.get(key, _replayable)
        if hit is not None:
            return self._restore(hit.value, hit.latency_s, request)
        result = self.inner.run(request)
        if result.ok:
            value = {name: getattr(result, name) for name in _FIELDS}
            value["steps"] = result.steps
            self.cache.put(key, kind="runner", provider=spec["provider"], model=spec["model"],
                           value=value, cost_usd=result.cost_usd, latency_s=result.latency_s)
        return result

    def _restore(self, value: dict[str, Any], latency: float | None,
                 request: RunRequest) -> RunResult:
        result = RunResult(**{k: value[k] for k in _FIELDS if k in value})
        if value.get("steps") is not None:  # stored cleaned: rebuilding changes nothing
            result.trace = build_trace(value["steps"])
        result.cache_hit = True
        result.latency_s = latency  # judges see it; the record writes it as cached_latency_s
        argv = getattr(self.inner, "build_argv", None)
        if callable(argv):  # a process runner: its logs and command, as a real run leaves them
            from eval_harness.config.masking import mask_argv

            result.argv = mask_argv(argv(request), list(request.secrets))
            for name, text in (("stdout.log", result.stdout), ("stderr.log", result.stderr)):
                with open(create_file(os.path.join(request.case_dir, name)), "w",
                          encoding="utf-8") as fh:
                    fh.write(text)
        return result


def _replayable(value: dict[str, Any]) -> bool:
    """Of the stored shape, and its steps rebuild into a trace."""
    if not stored_result_shape(value):
        return False
    if value.get("steps") is not None:
        build_trace(value["steps"])  # raises on steps it cannot read: a miss
    return True


def with_cache(runner: Runner, cache: CallCache | None) -> Runner:
    """``runner`` behind ``cache`` when both allow it."""
    if cache is None or not callable(getattr(runner, "cache_spec", None)):
        return runner
    return CachedRunner(runner, cache)
