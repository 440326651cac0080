"""Pre-flight: one tiny call per distinct judge model before any cell runs.

A wrong key, an unknown model or an unreachable endpoint would otherwise error every sample
after the agent has been paid for. Failure raises :class:`JudgeCheckError` (exit 2) with the
provider's own message. ``--no-judge-check`` skips it. The call also teaches the client a
model's quirks (e.g. no ``temperature``), so the first real verdict does not pay for them.
"""

from __future__ import annotations

from typing import Any

from eval_harness.errors import JudgeCheckError
from eval_harness.judges.llm.chat_call import LLMError, RetryPolicy, complete
from eval_harness.judges.llm.providers import ModelRef, parse_model


def judge_models(exp: Any) -> dict[str, tuple[ModelRef, float | None]]:
    """``provider:model`` -> (ref, temperature) over every condition's LLM judges."""
    configs = list((getattr(exp, "effective", None) or {}).values()) or [exp.loaded.config]
    found: dict[str, tuple[ModelRef, float | None]] = {}
    for cfg in configs:
        for block in cfg.judges:
            if not block.is_llm:
                continue
            name = block.model or cfg.models.judge
            if name:
                ref = parse_model(name)
                found.setdefault(ref.name, (ref, block.temperature))
    return found


def check_judge_models(exp: Any, policy: RetryPolicy | None = None) -> None:
    """Raise JudgeCheckError naming the first judge model that cannot answer."""
    policy = policy or RetryPolicy(attempts=3, base_delay=1.0, timeout=60.0)
    for name, (ref, temperature) in sorted(judge_models(exp).items()):
        try:
            complete(ref, "You are a connectivity check. Reply with the single word OK.",
                     "Reply OK.", schema=None, temperature=temperature, max_tokens=16,
                     policy=policy)
        except LLMError as exc:
            key = "ANTHROPIC" if ref.provider == "anthropic" else "OPENAI"
            raise JudgeCheckError(
                f"judge model {name} failed its check call: {exc}",
                hint=f"check {key}_BASE_URL / {key}_API_KEY and the model name, "
                     "or skip with --no-judge-check") from None
