"""The options each built-in judge accepts: an unknown key is a config error at load, with
a did-you-mean hint (``contains: {al: [...]}`` used to pass every sample silently)."""

from __future__ import annotations

import difflib
from typing import Any

#: kind -> option keys of its mapping form (json_schema's mapping is the schema itself)
BUILTIN_OPTIONS: dict[str, tuple[str, ...]] = {
    "exact_match": ("reference", "case_sensitive", "strip", "collapse_whitespace",
                    "strip_punctuation", "ignore_diacritics"),
    "contains": ("all", "any", "case_sensitive"),
    "regex": ("pattern", "flags", "must_match"),
    "entity_coverage": ("case_sensitive", "ignore_diacritics"),
    "tool_calls": ("max", "budget", "tag"),
    "tool_called": ("name", "args", "arguments", "times", "min_times", "not"),
    "max_steps": ("max", "kind"),
    "retrieval": ("k", "expected_docs", "metric"),
    "faithfulness": ("max_docs",),
    "context_relevance": ("max_docs",),
    "latency": ("max",),
    "cost": ("max",),
    "reference_correctness": ("reference",),
}


def did_you_mean(key: str, known: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean `x`?)`` or empty."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def unknown_option(kind: str, spec: Any) -> str | None:
    """A message naming the first unknown option of a built-in's mapping, or None.

    ``tool_calls`` also takes tier budgets inline (``{easy: 4, hard: 6, tag: tier}``); that
    form needs an explicit ``tag`` so a typo such as ``{mx: 3}`` is not read as a tier."""
    known = BUILTIN_OPTIONS.get(kind)
    if known is None or not isinstance(spec, dict):
        return None
    extra = [str(k) for k in spec if k not in known]
    if kind == "tool_calls" and "tag" in spec and "budget" not in spec and "max" not in spec:
        extra = [k for k in extra if did_you_mean(k, known)]  # the rest: inline tier budgets
    if not extra:
        return None
    key = extra[0]
    hint = did_you_mean(key, known)
    return f"unknown option `{key}`{hint}"


def options_hint(kind: str) -> str:
    """The hint shown with an unknown option."""
    text = f"`{kind}` takes: {', '.join(BUILTIN_OPTIONS[kind])}"
    if kind == "tool_calls":
        text += "; tier budgets go under `budget:` (or inline with an explicit `tag:`)"
    return text
