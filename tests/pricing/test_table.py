"""The shipped price table: matching, cache-token billing, overrides, sources."""
from __future__ import annotations

import pytest

from eval_harness.pricing.table import (
    price_usage,
    resolve_rates,
    shipped,
    table_lookup,
    usage_counts,
)


def test_table_is_dated_and_covers_three_vendors() -> None:
    table = shipped()
    assert table["date"] == "2025-11-01" and table["source"]
    assert {m["provider"] for m in table["models"].values()} == {"openai", "anthropic", "google"}
    assert all(set(m) >= {"input", "output", "cache_read", "cache_write"}
               for m in table["models"].values())


@pytest.mark.parametrize(("name", "entry"), [
    ("gpt-4o", "gpt-4o"), ("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("openai:gpt-4.1-nano", "gpt-4.1-nano"), ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("claude-sonnet-4-6", None), ("gpt-4o-turbo", None), ("my-local-model", None),
])
def test_lookup_never_prices_a_neighbour(name: str, entry: str | None) -> None:
    assert table_lookup(name) == entry


def test_cache_tokens_are_billed_at_their_rates() -> None:
    # OpenAI: 1000 prompt tokens of which 800 cached, 100 out, gpt-4o (2.5 / 1.25 / 10)
    openai = {"prompt_tokens": 1000, "completion_tokens": 100,
              "prompt_tokens_details": {"cached_tokens": 800}}
    assert price_usage("gpt-4o", openai) == pytest.approx(
        ((200 * 2.5 + 800 * 1.25 + 100 * 10) / 1e6, "table:2025-11-01"))
    # Anthropic: cached tokens beside input_tokens; sonnet 4.5 (3 / 0.3 read / 3.75 write / 15)
    anthropic = {"input_tokens": 100, "output_tokens": 50, "cache_read_input_tokens": 1000,
                 "cache_creation_input_tokens": 200}
    cost, source = price_usage("claude-sonnet-4-5", anthropic)
    assert source == "table:2025-11-01"
    assert cost == pytest.approx((100 * 3 + 1000 * 0.3 + 200 * 3.75 + 50 * 15) / 1e6)
    assert usage_counts({"input_tokens": 3}) is None


def test_config_overrides_the_table() -> None:
    rates, source = resolve_rates("gpt-4o", {"gpt-4o": {"input": 1.0, "output": 2.0}})
    assert (rates.input, rates.output, rates.cache_read, source) == (1.0, 2.0, None, "config")
    assert resolve_rates("m", None, {"m": [3.0, 4.0]})[1] == "config"  # runner.pricing
    assert price_usage("unknown-model", {"input_tokens": 1, "output_tokens": 1}) == (None, None)
