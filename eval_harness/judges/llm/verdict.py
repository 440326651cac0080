"""The verdict schema and its validation (fail closed).

A verdict is a JSON object with exactly two keys, ``reasoning`` (a string) first and then
``score`` (a number inside the range; never clamped) or ``verdict`` (a boolean, or
``"A" | "B" | "tie"`` for pairwise). Anything else — prose, a refusal, a truncated reply,
extra keys, the score before the reasoning, a string ``"true"`` — is an error, so a broken
judge can never pass an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eval_harness.judges.llm.chat_call import Completion
from eval_harness.judges.values import JudgeFailure

PAIRWISE = ("A", "B", "tie")


def schema(kind: str, rng: tuple[float, float] | None = None) -> dict[str, Any]:
    """JSON Schema of the verdict (sent as structured output, re-checked on receipt)."""
    if kind == "numeric" and rng is not None:
        # the range goes in the description: strict structured-output modes have rejected
        # minimum/maximum; it is enforced on receipt either way
        result: dict[str, Any] = {"type": "number",
                                  "description": f"from {rng[0]:g} to {rng[1]:g}"}
        key = "score"
    elif kind == "pairwise":
        result, key = {"type": "string", "enum": list(PAIRWISE)}, "verdict"
    else:
        result, key = {"type": "boolean"}, "verdict"
    return {"type": "object", "properties": {"reasoning": {"type": "string"}, key: result},
            "required": ["reasoning", key], "additionalProperties": False}


def _pairs(text: str) -> list[tuple[str, Any]]:
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, re.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    try:
        pairs = json.loads(stripped, object_pairs_hook=lambda p: p)
    except json.JSONDecodeError as exc:
        raise JudgeFailure(f"judge reply is not valid JSON ({exc.msg}): {stripped[:80]!r}") from None
    if not isinstance(pairs, list):
        raise JudgeFailure("judge reply is not a JSON object")
    return pairs


def parse(completion: Completion, kind: str, rng: tuple[float, float] | None) -> tuple[Any, str]:
    """(value, reasoning) from a completion, or raise JudgeFailure."""
    if completion.refusal:
        raise JudgeFailure(f"judge refused: {completion.refusal[:200]}")
    if completion.finish in ("length", "max_tokens"):
        raise JudgeFailure("judge reply was truncated (max_tokens)")
    if completion.structured is not None:
        pairs = list(completion.structured.items())
    elif completion.text:
        pairs = _pairs(completion.text)
    else:
        raise JudgeFailure("judge returned an empty reply")
    key = "score" if kind == "numeric" and rng is not None else "verdict"
    names = [k for k, _ in pairs]
    if names != ["reasoning", key]:
        raise JudgeFailure(f"verdict must be {{reasoning, {key}}} in that order; got keys {names}")
    reasoning, value = pairs[0][1], pairs[1][1]
    if not isinstance(reasoning, str):
        raise JudgeFailure("`reasoning` must be a string")
    if key == "score":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise JudgeFailure(f"`score` must be a number, got {value!r}")
        if not rng[0] <= value <= rng[1]:  # type: ignore[index]
            raise JudgeFailure(f"score {value!r} is outside [{rng[0]:g}, {rng[1]:g}] "  # type: ignore[index]
                               "(never clamped)")
        return float(value), reasoning
    if kind == "pairwise":
        if value not in PAIRWISE:
            raise JudgeFailure(f"pairwise verdict must be A, B or tie, got {value!r}")
        return value, reasoning
    if not isinstance(value, bool):
        raise JudgeFailure(f"`verdict` must be true or false, got {value!r}")
    return value, reasoning
