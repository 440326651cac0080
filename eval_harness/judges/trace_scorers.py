"""Built-in judges over the case's trace (``outputs["trace"]``, see eval_harness.trace).

- ``tool_called: "search" | {name, args: {..}, times: N, min_times: N, not: true}`` — tool
  steps (at any depth) named ``name`` whose input contains ``args`` (a subset match: every
  given key present with an equal value, nested mappings compared the same way; a JSON
  text input is parsed first). ``not: true`` passes when no step matches; ``times: N`` when
  exactly N match; otherwise at least ``min_times`` (default 1) must match. ``arguments``
  is accepted for ``args``.
- ``max_steps: 10 | {max: 10, kind: tool}`` — at most ``max`` steps (at any depth; only
  those of ``kind`` when given).

No trace (the run reported none) is an error, never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from eval_harness.config.template_syntax import render_value
from eval_harness.judges.values import JudgeFailure, Outcome
from eval_harness.trace.model import as_steps, walk_json


def _trace(ctx: dict[str, Any], what: str) -> list[Any]:
    trace = ctx["outputs"].get("trace")
    # an empty list with no tool-call count is what older records hold for "none reported"
    if not isinstance(trace, list) or (not trace and ctx["outputs"].get("tool_calls") is None):
        raise JudgeFailure(f"no trace reported: cannot tell {what}")
    if any(not isinstance(s, dict) or "kind" not in s for s in trace):
        return as_steps(trace)  # the older {tool, arguments} form (runs before traces)
    return trace


def subset_match(want: Any, got: Any) -> bool:
    """``want`` is contained in ``got``: mappings key by key (recursively), else equality."""
    if isinstance(got, str) and isinstance(want, Mapping):
        try:
            got = json.loads(got)
        except ValueError:
            return False
    if isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(
            k in got and subset_match(v, got[k]) for k, v in want.items())
    return bool(want == got)


def _tool_spec(spec: Any) -> dict[str, Any]:
    return {"name": spec} if isinstance(spec, str) else dict(spec) if isinstance(spec, dict) else {}


def tool_called(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """A tool step matches ``name`` and ``args`` the required number of times."""
    o = _tool_spec(spec)
    trace = _trace(ctx, "which tools were called")
    want = render_value(o.get("args", o.get("arguments", {})), ctx, where="judge")
    name = o.get("name")
    hits = sum(1 for step in walk_json(trace) if step.get("kind") == "tool"
               and step.get("name") == name and subset_match(want, step.get("input")))
    label = f"`{name}`" + (f" with {json.dumps(want, default=str)}" if want else "")
    if o.get("not"):
        return Outcome(hits == 0, f"{label} called {hits} time(s), must not be called")
    if "times" in o:
        need = int(o["times"])
        return Outcome(hits == need, f"{label} called {hits} time(s), need exactly {need}")
    need = int(o.get("min_times", 1))
    return Outcome(hits >= need, f"{label} called {hits} time(s), need at least {need}")


def max_steps(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """At most ``max`` steps (of ``kind``)."""
    o = spec if isinstance(spec, dict) else {"max": spec}
    kind = o.get("kind")
    trace = _trace(ctx, "how many steps ran")
    n = sum(1 for step in walk_json(trace) if kind is None or step.get("kind") == kind)
    limit = int(o["max"])
    what = f"{kind} steps" if kind else "steps"
    return Outcome(n <= limit, f"{n} {what}, limit {limit}")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_trace_spec(kind: str, spec: Any) -> str | None:
    """A static problem with a trace scorer's options, or None."""
    if kind == "tool_called":
        o = _tool_spec(spec)
        if not isinstance(o.get("name"), str):
            return "`tool_called` needs a tool name"
        for key in ("times", "min_times"):
            if key in o and not _count(o[key]):
                return f"`tool_called.{key}` needs an integer >= 0"
        if o.get("not") and ("times" in o or "min_times" in o):
            return "`tool_called`: `not: true` excludes `times` / `min_times`"
        if "not" in o and not isinstance(o["not"], bool):
            return "`tool_called.not` needs true or false"
    if kind == "max_steps":
        o = spec if isinstance(spec, dict) else {"max": spec}
        if not _count(o.get("max")):
            return "`max_steps` needs an integer >= 0 or {max: N, kind: tool}"
        if o.get("kind") is not None and not isinstance(o["kind"], str):
            return "`max_steps.kind` needs a step kind (llm, tool, retrieval, ...)"
    return None
