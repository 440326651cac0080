"""``openai`` and ``anthropic`` runners: one model call per cell over the vendors' wire format.

- openai: POST ``{base}/chat/completions`` (base: ``runner.base_url`` › ``OPENAI_BASE_URL`` ›
  ``https://api.openai.com/v1``; key: ``runner.api_key`` › ``OPENAI_API_KEY``, sent as
  ``Authorization: Bearer``). Works with any OpenAI-compatible server (Azure, vLLM, Ollama).
  ``effort`` is sent as ``reasoning_effort``.
- anthropic: POST ``{base}/v1/messages`` (``ANTHROPIC_BASE_URL`` › ``https://api.anthropic.com``;
  ``ANTHROPIC_API_KEY`` as ``x-api-key``; ``anthropic-version: 2023-06-01``). ``effort``
  low/medium/high (or an int) becomes an extended-thinking budget of 1024/4096/16384 tokens.

The user message is the rendered ``execution.prompt``, else the input's ``prompt`` /
``question`` field, else the input as JSON. Cost: the eval's ``pricing:`` › ``runner.pricing`` ›
the shipped price table (``cost_source`` in the record says which).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from eval_harness.config.models import EvalConfig
from eval_harness.config.template_syntax import render_arguments, render_value
from eval_harness.pricing.table import price_usage
from eval_harness.runner.contract import RunRequest, RunResult, register, usage_tokens
from eval_harness.runner.http import reply_to_result
from eval_harness.runner.httpcall import post_json
from eval_harness.trace.model import build_trace

THINKING_BUDGET = {"low": 1024, "medium": 4096, "high": 16384}
#: input tokens a provider may add to a request's own (spend cap worst case)
FRAMING_TOKENS = 1024


def user_message(config: EvalConfig, request: RunRequest) -> str:
    """The text sent as the user turn."""
    if config.execution.prompt:
        return str(render_value(config.execution.prompt, {"input": request.input,
                                                          "case_id": request.case_id},
                                where="execution.prompt"))
    ex = config.execution
    if ex.skill:  # agent-eval-harness skill mode: `/<skill> <arguments>`
        return f"/{ex.skill} {render_arguments(ex.arguments, request.input)}".strip()
    if isinstance(ex.arguments, str):  # its prompt-less mode: the arguments are the prompt
        return render_arguments(ex.arguments, request.input)
    for key in ("prompt", "question"):
        if isinstance(request.input.get(key), str):
            return str(request.input[key])
    return json.dumps(request.input, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Call:
    """One request as it will be sent (all of it is in the cache key; the headers as
    keyed hashes: eval_harness.cache.keys)."""

    provider: str
    url: str
    body: dict[str, Any]
    headers: dict[str, str]


class _LlmRunner:
    provider = ""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config

    def cancel_all(self) -> None:
        """Requests end by their own timeout."""

    def build(self, request: RunRequest) -> Call:  # pragma: no cover - overridden
        """The request for one cell."""
        raise NotImplementedError

    def parse(self, result: RunResult, body: Any) -> None:  # pragma: no cover - overridden
        """Fill ``result`` from a 2xx reply body (or mark it malformed)."""
        raise NotImplementedError

    def cache_spec(self, request: RunRequest) -> dict[str, Any]:
        """What identifies this cell's call for the model-call cache: the URL and body, and
        every header as sent (the key, ``runner.headers``) as a keyed hash."""
        call = self.build(request)
        return {"provider": call.provider, "endpoint": call.url, "model": str(request.model),
                "request": call.body,
                "private": {f"header:{k.lower()}": v for k, v in call.headers.items()}}

    def reply_bound(self, request: RunRequest) -> tuple[float, int] | None:
        """(the most this cell's call can cost in USD, its reply token limit) for the
        spend cap (runner/budget.py): the body's bytes as input tokens (a token is at least
        a byte) and ``max_tokens`` (with the thinking budget) out, at the model's price
        (0 without one: its cost counts 0); None when the reply has no token limit.
        :data:`FRAMING_TOKENS` more input tokens cover what the provider adds (chat
        template, the tool-use system prompt)."""
        from eval_harness.pricing.table import resolve_rates
        from eval_harness.runner.budget import call_worst

        call = self.build(request)
        out = call.body.get("max_tokens")
        if not isinstance(out, int) or isinstance(out, bool):
            return None
        runner = self.config.runner
        found = resolve_rates(request.model, self.config.pricing,
                              runner.pricing if runner else None)
        if found is None:
            return 0.0, out
        size = len(json.dumps(call.body, default=str).encode("utf-8")) + FRAMING_TOKENS
        return call_worst(found[0], size, out), out

    def endpoint(self, base_env: str, default_base: str, key_env: str) -> tuple[str, str | None]:
        """(base URL, API key): the runner block's, else the environment's, else the
        provider's public base URL (and no key)."""
        runner = self.config.runner
        base = (runner.base_url if runner and runner.base_url else None) or os.environ.get(
            base_env) or default_base
        key = (runner.api_key if runner else None) or os.environ.get(key_env)
        return base, key

    def run(self, request: RunRequest) -> RunResult:
        """One call."""
        call = self.build(request)
        reply = post_json(call.url, call.body, call.headers, self.config.execution.timeout,
                          self.config.execution.max_response_bytes)
        result = reply_to_result(reply)
        if reply.failure != "none":
            return result
        self.parse(result, reply.body)
        if result.failure != "none":
            return result
        result.raw = reply.body
        usage = reply.body.get("usage") if isinstance(reply.body, dict) else None
        runner = self.config.runner
        result.input_tokens, result.output_tokens, result.tokens = usage_tokens(usage)
        result.cost_usd, result.cost_source = price_usage(
            request.model, usage, self.config.pricing, runner.pricing if runner else None)
        return result


class OpenAIRunner(_LlmRunner):
    """Chat completions."""

    def build(self, request: RunRequest) -> Call:
        """POST {base}/chat/completions."""
        runner = self.config.runner
        base, key = self.endpoint("OPENAI_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY")
        messages = []
        if runner and runner.system:
            messages.append({"role": "system", "content": runner.system})
        messages.append({"role": "user", "content": user_message(self.config, request)})
        body: dict[str, Any] = {"model": str(request.model), "messages": messages}
        if runner and runner.temperature is not None:
            body["temperature"] = runner.temperature
        if runner and runner.max_tokens is not None:
            body["max_tokens"] = runner.max_tokens
        if request.effort is not None:
            body["reasoning_effort"] = str(request.effort)
        headers = dict(runner.headers if runner else {})
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return Call("openai", base.rstrip("/") + "/chat/completions", body, headers)

    def parse(self, result: RunResult, body: Any) -> None:
        """choices[0].message: content and tool calls."""
        try:
            message = body["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            message = None
        if not isinstance(message, dict):  # a string, a list, null: not a message object
            result.failure, result.reason = "error", "malformed output: no choices[0].message object"
            return
        result.output = _text_of(message.get("content"))
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            fns = [c.get("function") for c in calls if isinstance(c, dict)]
            result.trace = build_trace([
                {"kind": "tool", "name": fn.get("name"), "input": _arguments(fn.get("arguments"))}
                if isinstance(fn, dict) else {"kind": "tool", "name": None}
                for fn in fns])  # "function": "x" or null: a call, tool unknown


def _arguments(text: Any) -> Any:
    """OpenAI sends tool-call arguments as JSON text: parsed when it is valid JSON, so a
    trace scorer can match them (and secret-looking keys inside are masked)."""
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _text_of(content: Any) -> str:
    """A reply's text: a string as is; a list of parts (``{"type": "text", "text": ...}``)
    joined; anything else ("content": 5, an object) as empty text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


class AnthropicRunner(_LlmRunner):
    """Messages API."""

    def build(self, request: RunRequest) -> Call:
        """POST {base}/v1/messages."""
        runner = self.config.runner
        base, key = self.endpoint("ANTHROPIC_BASE_URL", "https://api.anthropic.com",
                                  "ANTHROPIC_API_KEY")
        max_tokens = (runner.max_tokens if runner and runner.max_tokens else None) or 4096
        body: dict[str, Any] = {
            "model": str(request.model), "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": user_message(self.config, request)}],
        }
        if runner and runner.system:
            body["system"] = runner.system
        if runner and runner.temperature is not None:
            body["temperature"] = runner.temperature
        budget = request.effort if isinstance(request.effort, int) else THINKING_BUDGET.get(
            str(request.effort).lower()) if request.effort is not None else None
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = max_tokens + budget
        headers = {"anthropic-version": "2023-06-01", **(runner.headers if runner else {})}
        if key:
            headers["x-api-key"] = key
        return Call("anthropic", base.rstrip("/") + "/v1/messages", body, headers)

    def parse(self, result: RunResult, body: Any) -> None:
        """Text blocks and tool_use blocks."""
        blocks = body.get("content") if isinstance(body, dict) else None
        if not isinstance(blocks, list):
            result.failure, result.reason = "error", "malformed output: no content blocks"
            return
        result.output = _text_of([b for b in blocks if isinstance(b, dict)
                                  and b.get("type") == "text"])
        tools = [{"kind": "tool", "name": b.get("name"), "input": b.get("input")} for b in blocks
                 if isinstance(b, dict) and b.get("type") == "tool_use"]
        result.trace = build_trace(tools) if tools else None


@register("openai")
def _openai(config: EvalConfig) -> OpenAIRunner:
    return OpenAIRunner(config)


@register("anthropic")
def _anthropic(config: EvalConfig) -> AnthropicRunner:
    return AnthropicRunner(config)
