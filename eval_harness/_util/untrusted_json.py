"""Untrusted JSON replies (agents, HTTP services, LLM judges): parse with a nesting limit,
replace lone surrogates so the value can be written as UTF-8 (see runner/scrub.py)."""

from __future__ import annotations

import json
from typing import Any

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
