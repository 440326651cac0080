"""A trace as indented text lines (``orchestrate show --trace``)."""

from __future__ import annotations

import json
from typing import Any

from eval_harness.trace.model import Step, Trace


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)
    text = " ".join(text.split())
    return text if not limit or len(text) <= limit else text[:limit] + " …"


def _line(step: Step, limit: int) -> str:
    parts = [f"{step.kind} {step.name}".rstrip()]
    if step.duration is not None:
        parts.append(f"{step.duration:.3g} s")
    if step.input is not None:
        parts.append("in " + _short(step.input, limit))
    if step.output is not None:
        parts.append("out " + _short(step.output, limit))
    return "  ".join(parts)


def trace_lines(trace: Trace, limit: int = 160, indent: str = "  ") -> list[str]:
    """One line per step (kind, name, duration, input, output cut to ``limit`` characters;
    0: never), children indented under their parent."""
    lines: list[str] = []

    def add(step: Step, depth: int) -> None:
        lines.append(indent * depth + _line(step, limit))
        for child in step.children:
            add(child, depth + 1)

    for step in trace.steps:
        add(step, 0)
    if trace.dropped:
        lines.append(f"… {trace.dropped} more step(s) not stored (trace limits)")
    return lines
