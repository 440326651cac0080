"""Replies from agents and HTTP services are untrusted text: make them safe to keep.

- **Invalid Unicode.** A JSON reply may carry lone surrogates (``"\\ud800"``), which cannot
  be written as UTF-8: writing ``outputs.json`` raised UnicodeEncodeError, recorded as an
  internal error. :func:`clean_text` replaces them (U+FFFD), as undecodable bytes are.
- **Nesting.** A reply nested thousands deep made RecursionError in parsing or in writing
  it back; :func:`too_deep` (iterative, no recursion) lets parsers refuse replies nested
  past :data:`MAX_DEPTH` levels as malformed output.

:func:`scrub_result` applies both to every runner's result (:mod:`eval_harness.runner.cell`).
"""

from __future__ import annotations

import json
from typing import Any

from eval_harness.runner.base import RunResult
from eval_harness.trace.model import build_trace

MAX_DEPTH = 200


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when lists / dicts in ``value`` nest deeper than ``limit``."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def loads_reply(text: str) -> Any:
    """``json.loads`` for a reply; ValueError when it is not JSON or nests too deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if too_deep(value):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (valid UTF-8 from then on)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def clean_value(value: Any) -> Any:
    """:func:`clean_text` over every string (keys too) of a JSON-like value (depth-bounded
    by the caller: only values that passed :func:`too_deep`)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    return value


def scrub_result(result: RunResult) -> RunResult:
    """Make a runner's result writable: valid text everywhere, no over-deep structures."""
    result.output = clean_text(result.output if isinstance(result.output, str)
                               else str(result.output))
    result.stdout, result.stderr = clean_text(result.stdout), clean_text(result.stderr)
    if result.reason is not None:
        result.reason = clean_text(str(result.reason))
    if result.trace is not None:  # depth and size already bounded by eval_harness.trace
        steps = result.steps
        cleaned = clean_value(steps)
        if cleaned != steps:
            result.trace = build_trace(cleaned)
    for name in ("raw", "files", "modified_files"):
        value = getattr(result, name)
        if value is None:
            continue
        if too_deep(value):
            setattr(result, name, None if name == "raw" else {})
            result.notes.append(f"{name} nested deeper than {MAX_DEPTH} levels; not kept")
        else:
            setattr(result, name, clean_value(value))
    return result
