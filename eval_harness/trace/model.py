"""The trace model: typed, nested steps, clipped and masked before anything is stored.

A step (docs/traces.md)::

    {"kind": "llm" | "tool" | "retrieval" | <any short text, default "custom">,
     "name": "search", "input": ..., "output": ..., "started": ..., "duration": 0.12,
     "children": [<steps>]}

``started`` is what the application reported (an ISO-8601 text or a number of seconds),
``duration`` is seconds (null when unknown). Reported step objects may also use the older
``{tool, arguments}`` form (a tool step), ``type`` for ``kind``, ``args`` / ``arguments``
for ``input``, ``result`` for ``output`` and ``duration_s`` for ``duration``; a bare string
is a tool step of that name.

Limits, so a run directory stays small and a hostile agent cannot blow it up: every text
inside ``input`` / ``output`` is clipped to :data:`MAX_TEXT` characters, every list to
:data:`MAX_ITEMS` items, nesting (of values and of steps) to :data:`MAX_DEPTH` levels, and a
trace to :data:`MAX_STEPS` steps in all (the rest are dropped and counted). Values under
secret-looking keys (``api_key``, ``password``, ``token``, ``secret``, ``authorization``,
``cookie``, ``credentials``...) become ``***`` at any depth; registered secret values are
masked again when the file is written (``eval_harness._util.redact``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from eval_harness._util.numbers import run_number
from eval_harness._util.redact import secret_key_name

SCHEMA_VERSION = 1
MAX_TEXT = 4000
MAX_ITEMS = 100
MAX_DEPTH = 12
MAX_STEPS = 1000
MAX_NAME = 200
MASK = "***"

def clip_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters with a note of how many were dropped."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit} more characters]"


def clean(value: Any, depth: int = 0) -> Any:
    """A JSON-ready copy of ``value``: secrets masked, texts and lists clipped, depth cut."""
    if isinstance(value, str):
        return clip_text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        return "… [nested too deep]"
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= MAX_ITEMS:
                out["…"] = f"[{len(value) - MAX_ITEMS} more keys]"
                break
            key = clip_text(str(k), MAX_NAME)
            out[key] = MASK if secret_key_name(key) and v not in (None, "") else clean(v, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        items = [clean(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… [{len(value) - MAX_ITEMS} more items]")
        return items
    return clip_text(str(value))


def mask_keys(value: Any) -> Any:
    """A copy of ``value`` with values under secret-looking keys masked, nothing clipped (for
    the raw reply kept in ``outputs.json``). A JSON-object text under ``arguments`` (OpenAI
    tool calls) is masked inside and written back as text."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if secret_key_name(str(k)) and v not in (None, ""):
                out[k] = MASK
            elif k == "arguments" and isinstance(v, str) and v.lstrip().startswith("{"):
                try:
                    out[k] = json.dumps(mask_keys(json.loads(v)))
                except ValueError:
                    out[k] = v
            else:
                out[k] = mask_keys(v)
        return out
    if isinstance(value, list):
        return [mask_keys(v) for v in value]
    return value


@dataclass(frozen=True)
class Step:
    """One step of a trace (already clipped and masked)."""

    kind: str
    name: str
    input: Any = None
    output: Any = None
    started: float | str | None = None
    duration: float | None = None
    children: tuple[Step, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        return {"kind": self.kind, "name": self.name, "input": self.input,
                "output": self.output, "started": self.started, "duration": self.duration,
                "children": [c.to_json() for c in self.children]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        """Read a stored step (no re-cleaning: it was cleaned when written)."""
        kids = data.get("children")
        return cls(kind=str(data.get("kind", "custom")), name=str(data.get("name", "")),
                   input=data.get("input"), output=data.get("output"),
                   started=data.get("started"), duration=data.get("duration"),
                   children=tuple(cls.from_json(c) for c in kids if isinstance(c, Mapping))
                   if isinstance(kids, list) else ())

    def walk(self) -> Iterator[Step]:
        """This step and every descendant, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class Trace:
    """A case's trace as stored in ``cases/<id>/trace.json``."""

    steps: tuple[Step, ...]
    dropped: int = 0  # steps beyond MAX_STEPS (or nested too deep), not stored
    schema_version: int = SCHEMA_VERSION

    def walk(self) -> Iterator[Step]:
        """Every step, depth first."""
        for step in self.steps:
            yield from step.walk()

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        return {"schema_version": self.schema_version, "dropped": self.dropped,
                "steps": [s.to_json() for s in self.steps]}



def _first(raw: Mapping[str, Any], *keys: str) -> Any:
    return next((raw[k] for k in keys if k in raw), None)


class _Builder:
    """Turns reported steps into :class:`Step` objects within the step budget."""

    def __init__(self) -> None:
        self.count = 0
        self.dropped = 0

    def steps(self, raw: Any, depth: int) -> tuple[Step, ...]:
        if not isinstance(raw, (list, tuple)):
            return ()
        out = []
        for item in raw:
            step = self.step(item, depth)
            if step is not None:
                out.append(step)
        return tuple(out)

    def step(self, raw: Any, depth: int) -> Step | None:
        if self.count >= MAX_STEPS or depth >= MAX_DEPTH:
            self.dropped += 1 + (_size(raw.get("children")) if isinstance(raw, Mapping) else 0)
            return None
        self.count += 1
        if not isinstance(raw, Mapping):
            return Step(kind="tool", name=clip_text(str(raw), MAX_NAME))
        legacy = "tool" in raw and "kind" not in raw and "type" not in raw
        kind = "tool" if legacy else str(_first(raw, "kind", "type") or "custom")
        name = _first(raw, "name", "tool") if not legacy else raw.get("tool")
        started = raw.get("started")
        return Step(
            kind=clip_text(kind, MAX_NAME), name=clip_text("" if name is None else str(name),
                                                           MAX_NAME),
            input=clean(_first(raw, "input", "arguments", "args"), 1),
            output=clean(_first(raw, "output", "result"), 1),
            started=started if isinstance(started, str) and len(started) <= MAX_NAME
            else run_number(started),
            duration=run_number(_first(raw, "duration", "duration_s")),
            children=self.steps(raw.get("children"), depth + 1))


def _size(raw: Any) -> int:
    """Steps in a (dropped) list of reported steps, counted without recursion (a hostile
    reply may nest far deeper than the stack)."""
    count, stack = 0, [raw]
    while stack:
        items = stack.pop()
        if not isinstance(items, (list, tuple)):
            continue
        count += len(items)
        stack.extend(r.get("children") for r in items if isinstance(r, Mapping))
    return count


def build_trace(raw: Any) -> Trace:
    """A :class:`Trace` from reported steps (a list of step objects or names)."""
    builder = _Builder()
    steps = builder.steps(raw, 0)
    return Trace(steps=steps, dropped=builder.dropped)


def as_steps(raw: Any) -> list[dict[str, Any]]:
    """Reported steps in the stored JSON form (cleaned), e.g. for a check judge's own use."""
    return build_trace(raw).to_json()["steps"]  # type: ignore[no-any-return]


def walk_json(steps: Any) -> Iterator[Mapping[str, Any]]:
    """Every step dict of a stored / judge-visible trace (``outputs["trace"]``), depth first."""
    if not isinstance(steps, list):
        return
    for step in steps:
        if isinstance(step, Mapping):
            yield step
            yield from walk_json(step.get("children"))
