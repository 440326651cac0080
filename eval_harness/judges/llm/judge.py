"""LLM judges: ``prompt`` / ``prompt_file`` and the built-in ``reference_correctness``.

One call per sample index: look the verdict up in the cache; otherwise fence the untrusted
outputs with a fresh delimiter, ask for structured output at temperature 0 (see
:mod:`.http` for the fallbacks), validate the reply (:mod:`.verdict`) and cache it. Under
the verdict cache (per eval) sits the model-call cache (:mod:`eval_harness.cache`, shared
across evals and runs dirs), keyed by endpoint, model, the full prompt (rendered with
the fixed key fence, since the live fence is random per call) and the headers as sent
(the API key among them, as a keyed hash: :mod:`eval_harness.cache.keys`). Every
failure raises :class:`JudgeFailure`, so the sample is errored, never passed. The verdict
records the judge model, the temperature actually used, tokens and cost.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eval_harness.cache.active import current_cache
from eval_harness.judges.cache import VerdictCache, cache_key
from eval_harness.judges.llm import verdict
from eval_harness.judges.llm.chat_call import Completion, LLMError, RetryPolicy, complete
from eval_harness.judges.llm.prompting import (
    KEY_TOKEN,
    Fence,
    as_text,
    new_fence,
    render,
    reply_format,
    system_prompt,
)
from eval_harness.judges.llm.providers import ModelRef
from eval_harness.judges.values import JudgeFailure, Outcome

REFERENCE_TEMPLATE = """\
Task given to the system under evaluation (from the dataset):
{{ input }}

Reference answer (trusted, written by the dataset author):
{{ reference }}

Answer to evaluate:
{{ outputs.output }}

Judge CORRECTNESS against the reference: the answer is correct when it answers the task and
contradicts nothing in the reference (no wrong facts, numbers, names or conclusions).
Do NOT penalise the answer for omitting details the reference mentions, and do not reward
length or style: judge contradiction, not coverage. {scale}"""

SCALE_BOOL = "Give verdict true when the answer is correct, false when it contradicts the reference."
SCALE_NUM = ("Score {hi:g} when nothing contradicts the reference, {lo:g} when the answer's main "
             "claim contradicts it, and in between for minor contradictions.")


@dataclass(frozen=True)
class LLMSettings:
    """Call settings of one LLM judge."""

    model: ModelRef
    temperature: float | None = 0.0
    max_tokens: int = 1024
    cost_per_mtok: tuple[float, float] | None = None  # USD per million (input, output) tokens
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    fence: bool = True  # False only to demonstrate injection in tests


def reference_template(rng: tuple[float, float] | None) -> str:
    """The reference_correctness prompt for a boolean or numeric scale."""
    scale = SCALE_NUM.format(lo=rng[0], hi=rng[1]) if rng else SCALE_BOOL
    return REFERENCE_TEMPLATE.replace("{scale}", scale)


class LLMJudge:
    """A prompt judge on one model."""

    def __init__(self, name: str, template: str, settings: LLMSettings,
                 rng: tuple[float, float] | None, cache: VerdictCache,
                 reference: Any = None, kind: str | None = None, appendix: str = "") -> None:
        self.name = name
        self.appendix = appendix  # trusted text after the rendered prompt (judge context)
        self.template = template
        self.settings = settings
        self.rng = rng
        self.kind = kind or ("numeric" if rng is not None else "boolean")
        self.cache = cache
        self.reference = reference  # a template for reference_correctness, else None

    def _context(self, ctx: dict[str, Any]) -> dict[str, Any]:
        if self.reference is None:
            return ctx
        from eval_harness.config.template_syntax import render_value
        from eval_harness.judges.expected import reference_answer

        ref = (render_value(self.reference, ctx, where=self.name) if self.reference is not True
               else reference_answer(ctx["expected"]))
        if ref is None:
            raise JudgeFailure("reference_correctness needs `expected.answer` (or a string "
                               "expected, or reference: '{{ expected.x }}')")
        return {**ctx, "reference": as_text(ref)}

    def _prompt(self, ctx: dict[str, Any], fence: Fence | None) -> str:
        text, used = render(self.template, ctx, fence)
        if not used:  # the template never showed the answer: append it, fenced
            answer = as_text(ctx["outputs"].get("output") or "")
            text += "\n\nAnswer to evaluate:\n" + (fence.wrap(answer) if fence else answer)
        return text + self.appendix

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """One verdict (cached by judge, prompt, answer and sample index)."""
        ctx = self._context(ctx)
        s = self.settings
        fmt = reply_format(self.kind, self.rng)
        key_fence = Fence(KEY_TOKEN) if s.fence else None
        key = cache_key(self.name, s.model.name, self.kind, self.rng, s.fence,
                        system_prompt(key_fence, fmt), self._prompt(ctx, key_fence),
                        as_text(ctx["outputs"].get("output")), sample_index,
                        s.temperature, s.max_tokens)
        hit = self.cache.get(key)
        if hit is not None:
            return Outcome(hit["value"], hit.get("rationale"), {**hit.get("meta", {}), "cached": True})
        reply, from_cache, keep = self._complete(ctx, fmt, key_fence, sample_index)
        value, reasoning = verdict.parse(reply, self.kind, self.rng)  # a rejection: not kept
        meta = call_meta(s, reply.temperature, reply.input_tokens, reply.output_tokens,
                         reply.cost_usd, reply.warnings)
        keep()
        self.cache.put(key, self.name, value, reasoning, meta)
        extra: dict[str, Any] = {"cache_hit": True} if from_cache else {}
        return Outcome(value, reasoning, {**meta, "cached": False, **extra})

    def _complete(self, ctx: dict[str, Any], fmt: str, key_fence: Fence | None,
                  sample_index: int) -> tuple[Completion, bool, Callable[[], None]]:
        """(the model's reply, True when it came from the model-call cache, the step that
        stores it there: called only once the reply parsed as a verdict, since failures
        are never stored)."""
        s = self.settings
        schema = verdict.schema(self.kind, self.rng)
        calls = current_cache()
        key = None
        if calls is not None:
            from eval_harness.cache.keys import call_key
            from eval_harness.judges.llm.chat_call import request_target

            url, headers = request_target(s.model)
            key = call_key(
                kind="judge", provider=s.model.provider, endpoint=url,
                model=s.model.model, replication=sample_index,
                request={"system": system_prompt(key_fence, fmt),
                         "user": self._prompt(ctx, key_fence), "schema": schema,
                         "temperature": s.temperature, "max_tokens": s.max_tokens},
                private={f"header:{k.lower()}": v for k, v in headers.items()},
                secret=calls.identity_secret)
            stored = calls.get(key, stored_completion_shape)
            if stored is not None:
                return Completion(**stored.value), True, _nothing
        untrusted = json.dumps(ctx["outputs"], default=str)
        fence = new_fence(untrusted, self.template) if s.fence else None
        try:
            reply = complete(s.model, system_prompt(fence, fmt), self._prompt(ctx, fence),
                             schema=schema, temperature=s.temperature,
                             max_tokens=s.max_tokens, policy=s.policy)
        except LLMError as exc:
            raise JudgeFailure(f"judge call failed: {exc}") from None
        if calls is None or key is None:
            return reply, False, _nothing
        call_key_ = key

        def keep() -> None:
            meta = call_meta(s, reply.temperature, reply.input_tokens, reply.output_tokens,
                             reply.cost_usd, reply.warnings)
            calls.put(call_key_, kind="judge", provider=s.model.provider, model=s.model.model,
                      value=dataclasses.asdict(reply), cost_usd=meta["cost_usd"],
                      latency_s=None)
        return reply, False, keep


def _nothing() -> None:
    """Nothing to store (a cache hit, or no cache)."""


def _optional(kind: type | tuple[type, ...]) -> Callable[[Any], bool]:
    return lambda v: v is None or (isinstance(v, kind) and not isinstance(v, bool))


#: what each field of a stored judge reply must be to be replayed as a Completion
_COMPLETION_SHAPE: dict[str, Callable[[Any], bool]] = {
    "text": _optional(str), "structured": _optional(dict), "refusal": _optional(str),
    "finish": _optional(str), "input_tokens": _optional(int), "output_tokens": _optional(int),
    "cost_usd": lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                        and math.isfinite(v) and v >= 0),
    "temperature": lambda v: v is None or (isinstance(v, (int, float))
                                           and not isinstance(v, bool) and math.isfinite(v)),
    "warnings": lambda v: isinstance(v, list) and all(isinstance(w, str) for w in v),
}


def stored_completion_shape(value: dict[str, Any]) -> bool:
    """True when ``value`` is a judge reply as stored (every Completion field, of its type,
    and nothing else): another shape is a miss, never a verdict."""
    return set(value) == set(_COMPLETION_SHAPE) and all(
        _COMPLETION_SHAPE[name](v) for name, v in value.items())


def call_meta(s: LLMSettings, temperature: float | None, tin: int | None, tout: int | None,
              cost: float | None, warnings: list[str]) -> dict[str, Any]:
    """Per-verdict metadata: model, temperature used, tokens, cost (None when unknown) and
    where the cost came from: ``reported`` by the gateway, ``config`` (``cost_per_mtok``)
    or ``table:<date>`` (:mod:`eval_harness.pricing.table`)."""
    source = "reported" if cost is not None else None
    if cost is None and tin is not None and tout is not None:
        from eval_harness.pricing.table import Rates, Usage, call_cost, resolve_rates

        found = ((Rates(*s.cost_per_mtok), "config") if s.cost_per_mtok is not None
                 else resolve_rates(s.model.model))
        if found is not None:
            cost, source = call_cost(found[0], Usage(tin, tout)), found[1]
    tokens = tin + tout if tin is not None and tout is not None else None
    meta: dict[str, Any] = {"judge_model": s.model.name, "temperature": temperature,
                            "input_tokens": tin, "output_tokens": tout, "tokens": tokens,
                            "cost_usd": cost, "cost_source": source}
    if warnings:
        meta["warnings"] = list(warnings)
    return meta
