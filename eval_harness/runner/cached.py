"""A runner behind the model-call cache (docs/cost.md).

Runners that can name their call (``cache_spec(request)``: the openai, anthropic and
claude-code runners) are wrapped; the others (cli, http, python: the user's own
application, which may be stateful) are not. A hit returns the stored result marked
``cache_hit``: its latency is not this run's (the record writes ``latency_s: null`` and
keeps the original as ``cached_latency_s``) and its cost is not spent (it counts as saved).
Only successful calls are stored: a failure is called again next time.
"""

from __future__ import annotations

import os
from typing import Any

from eval_harness.cache.keys import call_key
from eval_harness.cache.store import CallCache
from eval_harness.runner.contract import Runner, RunRequest, RunResult
from eval_harness.trace.model import build_trace

#: RunResult fields kept in the cache (latency separately, argv re-derived per cell)
_FIELDS = ("output", "exit_code", "stdout", "stderr", "cost_usd", "cost_source",
           "input_tokens", "output_tokens", "tokens", "files", "modified_files",
           "raw", "notes")  # and the trace, as its JSON steps under "steps"


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
        if not self.cache.refresh and self.cache.peek(self.key(request)[0]) is not None:
            return 0.0, bound[1] if bound is not None else None
        return bound

    def run(self, request: RunRequest) -> RunResult:
        """The stored result, or the inner call (stored when it succeeded)."""
        key, spec = self.key(request)
        hit = self.cache.get(key)
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
                with open(os.path.join(request.case_dir, name), "w", encoding="utf-8") as fh:
                    fh.write(text)
        return result


def with_cache(runner: Runner, cache: CallCache | None) -> Runner:
    """``runner`` behind ``cache`` when both allow it."""
    if cache is None or not callable(getattr(runner, "cache_spec", None)):
        return runner
    return CachedRunner(runner, cache)
