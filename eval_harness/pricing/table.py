"""Prices per 1M tokens and the cost of one call (docs/cost.md, "Price sources").

Where a price comes from, in order (the first that knows the model wins):

1. ``config``: the eval's ``pricing:`` block (``model: {input, output, cache_read,
   cache_write}``), or the older ``runner.pricing`` (``model: [input, output]``);
2. ``table:<date>``: the table shipped with the package (``prices.json``, dated).

A model name matches a table entry exactly, or as the entry plus a version suffix
(``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``, ``...-latest``); a
``provider:`` / ``provider/`` prefix is ignored. ``claude-sonnet-4-6`` does *not* match
``claude-sonnet-4``: an unknown model has no price (cost ``None``), never a neighbour's.

Cost of a call = (uncached input × input + cache reads × cache_read + cache writes ×
cache_write + output × output) / 1e6. OpenAI counts cached tokens inside
``prompt_tokens``; Anthropic reports them beside ``input_tokens``; both are handled by
:func:`usage_counts`.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

_SUFFIX = re.compile(r"^(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest|-preview.*|-exp.*|@.*|-v\d+(:\d+)?)$")


@dataclass(frozen=True)
class Rates:
    """USD per 1M tokens."""

    input: float
    output: float
    cache_read: float | None = None  # None: billed as input
    cache_write: float | None = None  # None: billed as input


@dataclass(frozen=True)
class Usage:
    """Token counts of one call, split by how they are billed."""

    input: int  # uncached input tokens
    output: int
    cache_read: int = 0
    cache_write: int = 0


@functools.lru_cache(maxsize=1)
def shipped() -> dict[str, Any]:
    """The package's price table (parsed once)."""
    text = resources.files("eval_harness.pricing").joinpath("prices.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _rates(entry: Mapping[str, Any]) -> Rates:
    return Rates(float(entry["input"]), float(entry["output"]),
                 None if entry.get("cache_read") is None else float(entry["cache_read"]),
                 None if entry.get("cache_write") is None else float(entry["cache_write"]))


def bare_model(model: str) -> str:
    """``openai:gpt-4o`` / ``anthropic/claude-x`` -> the model name alone."""
    for sep in (":", "/"):
        head, found, tail = model.partition(sep)
        if found and tail and head in ("openai", "anthropic", "google", "gemini"):
            return tail
    return model


def table_lookup(model: str, models: Mapping[str, Any] | None = None) -> str | None:
    """The table entry naming ``model`` (exact, or with a version suffix), else None."""
    models = shipped()["models"] if models is None else models
    name = bare_model(model)
    if name in models:
        return name
    best = None
    for key in models:
        if name.startswith(key) and _SUFFIX.match(name[len(key):]):
            best = key if best is None or len(key) > len(best) else best
    return best


def resolve_rates(model: Any, pricing: Mapping[str, Any] | None = None,
                  runner_pricing: Mapping[str, Any] | None = None) -> tuple[Rates, str] | None:
    """(rates, source) for ``model`` — ``config`` or ``table:<date>`` — or None."""
    if model is None:
        return None
    name = str(model)
    for block in (pricing, runner_pricing):
        if not block:
            continue
        entry = block.get(name, block.get(bare_model(name)))
        if entry is None:
            continue
        if isinstance(entry, (list, tuple)):
            if len(entry) == 2:
                return Rates(float(entry[0]), float(entry[1])), "config"
            continue
        if hasattr(entry, "model_dump"):
            entry = entry.model_dump()
        return _rates(entry), "config"
    table = shipped()
    key = table_lookup(name, table["models"])
    if key is None:
        return None
    return _rates(table["models"][key]), f"table:{table['date']}"


def call_cost(rates: Rates, usage: Usage) -> float:
    """USD of one call (module doc)."""
    read = rates.input if rates.cache_read is None else rates.cache_read
    write = rates.input if rates.cache_write is None else rates.cache_write
    return (usage.input * rates.input + usage.output * rates.output
            + usage.cache_read * read + usage.cache_write * write) / 1_000_000


def _count(value: Any) -> int | None:
    if (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0):
        return int(value)
    return None


def usage_counts(usage: Mapping[str, Any] | None) -> Usage | None:
    """A :class:`Usage` from an OpenAI or Anthropic ``usage`` object; None without both
    input and output counts."""
    if not isinstance(usage, Mapping):
        return None
    out = _count(usage.get("output_tokens", usage.get("completion_tokens")))
    if "prompt_tokens" in usage:  # OpenAI: cached tokens are part of prompt_tokens
        prompt = _count(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else None
        if prompt is None or out is None:
            return None
        cached = min(cached or 0, prompt)
        return Usage(prompt - cached, out, cache_read=cached)
    inp = _count(usage.get("input_tokens"))
    if inp is None or out is None:
        return None
    return Usage(inp, out, cache_read=_count(usage.get("cache_read_input_tokens")) or 0,
                 cache_write=_count(usage.get("cache_creation_input_tokens")) or 0)


def price_usage(model: Any, usage: Mapping[str, Any] | None,
                pricing: Mapping[str, Any] | None = None,
                runner_pricing: Mapping[str, Any] | None = None) -> tuple[float | None, str | None]:
    """(USD, source) of one call from its reported usage; (None, None) when the model has
    no price or the usage is incomplete."""
    counts = usage_counts(usage)
    found = resolve_rates(model, pricing, runner_pricing)
    if counts is None or found is None:
        return None, None
    rates, source = found
    return call_cost(rates, counts), source
