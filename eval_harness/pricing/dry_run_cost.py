"""Dry-run cost from the price table × tokens (docs/cost.md, "Dry-run estimate").

Tokens per call, in order of preference:

- **measured**: the mean input and output tokens of earlier records of the same condition
  (runner) or judge under ``runs/<eval>/``;
- **prompt length**: the rendered prompt's characters / :data:`CHARS_PER_TOKEN` (plus the
  system prompt), and for the reply :data:`POINT_REPLY_TOKENS` capped at ``max_tokens``.

Point = tokens × prices. Upper bound = the same input with every reply at its cap
(``max_tokens``; the thinking budget included; :data:`ASSUMED_MAX_TOKENS` when none is
set), so a real run costs more than the upper bound only when prompts are far longer than
estimated. Pure arithmetic: the caller measures and renders.
"""

from __future__ import annotations

from dataclasses import dataclass

from eval_harness.pricing.table import Rates, Usage, call_cost

#: rough characters per token of English prompts (OpenAI's and Anthropic's rule of thumb)
CHARS_PER_TOKEN = 4.0
#: reply length assumed for a point estimate when nothing was measured
POINT_REPLY_TOKENS = 256
#: a judge verdict (JSON with a short rationale), when nothing was measured
POINT_VERDICT_TOKENS = 150
#: output cap assumed for an upper bound when the config sets none
ASSUMED_MAX_TOKENS = 4096
#: tokens of the judge's fixed system prompt and fences (measured on the built-in template)
JUDGE_OVERHEAD_TOKENS = 250


@dataclass(frozen=True)
class Tokens:
    """Tokens of one call: input, a point reply and the reply cap."""

    input: float
    output: float
    output_max: float
    source: str  # "measured over N records" | "prompt length"


def text_tokens(chars: float) -> float:
    """Tokens of ``chars`` characters of text (rule of thumb)."""
    return chars / CHARS_PER_TOKEN


def measured(mean_in: float | None, mean_out: float | None, n: int, cap: float) -> Tokens | None:
    """Tokens from earlier records (None without both means)."""
    if mean_in is None or mean_out is None or n == 0:
        return None
    return Tokens(mean_in, mean_out, max(cap, mean_out), f"measured over {n} records")


def from_prompt(prompt_chars: float, cap: int | None, point_reply: int) -> Tokens:
    """Tokens from the rendered prompt length and the reply cap."""
    limit = float(cap) if cap else float(ASSUMED_MAX_TOKENS)
    return Tokens(text_tokens(prompt_chars), min(limit, point_reply), limit, "prompt length")


def cost_range(rates: Rates, tokens: Tokens, calls: float) -> tuple[float, float]:
    """(point, upper bound) USD of ``calls`` calls."""
    point = call_cost(rates, Usage(round(tokens.input), round(tokens.output))) * calls
    upper = call_cost(rates, Usage(round(tokens.input), round(tokens.output_max))) * calls
    return point, upper
