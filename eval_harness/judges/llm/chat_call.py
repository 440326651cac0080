"""One chat call to an OpenAI-compatible or Anthropic endpoint, over stdlib ``urllib``.

Hardening:

- transient failures (connection errors, 408/409/425/429/5xx/529) are retried by the
  policy cell calls use (:mod:`eval_harness._util.retrying`: exponential back-off with jitter,
  ``Retry-After`` a floor up to ``max_delay``, no retry once the run is aborting);
  anything left after the last attempt raises :class:`LLMError` (the caller fails closed);
- a 400 naming ``temperature`` (reasoning models refuse it) is retried once without the
  temperature, remembered per model, and reported as a warning;
- a 400 naming ``response_format`` / ``json_schema`` (servers without structured output)
  is retried without it (the prompt still demands JSON, and the verdict is validated);
- OpenAI ``message.refusal`` and Anthropic ``stop_reason: refusal`` surface as ``refusal``.

Structured output: OpenAI ``response_format: {type: json_schema, strict: true}``;
Anthropic a forced tool call whose ``input_schema`` is the verdict schema.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from eval_harness._util.numbers import run_number
from eval_harness.judges.llm.providers import ModelRef, endpoint, missing_key, shown_url

# _util.http_post (http.client, ssl, urllib) is imported on the first call, not here:
# --dry-run builds every judge and must not pay for the HTTP stack (docs/performance.md)
MAX_RESPONSE_BYTES = 32 * 1024 * 1024  # = _util.http_post.MAX_RESPONSE_BYTES (a test checks)

ANTHROPIC_VERSION = "2023-06-01"
RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504, 529}
VERDICT_TOOL = "record_verdict"

_LOCK = threading.Lock()
_LOG = logging.getLogger("eval_harness.judges")
_NO_TEMPERATURE: set[str] = set()
_NO_SCHEMA: set[str] = set()


class LLMError(Exception):
    """A judge call that failed for good (after retries)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and back-off (seconds): before retry n, min(max_delay, base_delay·2^(n−1) +
    U(0, base_delay)), at least the server's Retry-After up to max_delay."""

    attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 20.0
    timeout: float = 120.0  # wall-clock deadline per request
    max_bytes: int = MAX_RESPONSE_BYTES  # largest reply body read


@dataclass
class Completion:
    """What came back."""

    text: str | None
    structured: dict[str, Any] | None
    refusal: str | None
    finish: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    temperature: float | None
    warnings: list[str] = field(default_factory=list)


def reset_capabilities() -> None:
    """Forget learned per-model quirks (tests)."""
    with _LOCK:
        _NO_TEMPERATURE.clear()
        _NO_SCHEMA.clear()


def _error_text(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested thousands deep
        return text.strip()[:300] or "(empty body)"
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        return str(err.get("message") or err.get("type") or err)[:300]
    return str(err)[:300]


@dataclass(frozen=True)
class _Transient:
    """One attempt that may succeed if retried."""

    message: str
    retry_after: float | None = None


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After: <seconds>`` header (an HTTP date is ignored)."""
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _attempt(url: str, headers: dict[str, str], data: bytes,
             policy: RetryPolicy) -> dict[str, Any] | _Transient:
    """One request: the parsed reply, a transient failure, or LLMError (permanent)."""
    from eval_harness._util.http_post import TransportError, post
    from eval_harness._util.untrusted_json import loads_reply

    try:
        # wall-clock deadline per request, no redirects, capped body (_util.http_post)
        reply = post(url, data, headers, deadline_s=policy.timeout, max_bytes=policy.max_bytes)
    except TransportError as exc:
        if not exc.transient:
            raise LLMError(str(exc)) from None
        return _Transient(f"connection failed: {exc}")
    if reply.status >= 400:
        last = f"HTTP {reply.status}: {_error_text(reply.body)}"
        if reply.status not in RETRY_STATUSES:
            raise LLMError(last, reply.status) from None
        return _Transient(last, _retry_after(reply.headers.get("Retry-After")))
    try:
        parsed = loads_reply(reply.body.decode("utf-8", "replace"))
    except ValueError as exc:
        why = str(exc) if "nested" in str(exc) else "a non-JSON body"
        raise LLMError(f"provider returned {why}") from None
    if not isinstance(parsed, dict):
        raise LLMError("provider returned a non-object body")
    return parsed


def _post(url: str, headers: dict[str, str], body: dict[str, Any],
          policy: RetryPolicy) -> dict[str, Any]:
    """The request with the cell-retry policy (:mod:`eval_harness._util.retrying`: jittered
    exponential backoff, Retry-After a floor up to ``max_delay``, no retry past an abort)."""
    from eval_harness._util.retrying import Backoff, call_with_backoff

    data = json.dumps(body).encode()
    result, attempts = call_with_backoff(
        lambda: _attempt(url, headers, data, policy),
        transient=lambda r: isinstance(r, _Transient),
        retry_after=lambda r: r.retry_after if isinstance(r, _Transient) else None,
        retries=policy.attempts - 1,
        backoff=Backoff(policy.base_delay, policy.max_delay, max_retry_after=policy.max_delay))
    if isinstance(result, _Transient):
        raise LLMError(f"gave up after {attempts} attempts; last: {result.message}")
    return result


def _openai_body(ref: ModelRef, system: str, user: str, schema: dict[str, Any] | None,
                 temperature: float | None, max_tokens: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": ref.model, "max_tokens": max_tokens,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    if temperature is not None:
        body["temperature"] = temperature
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "verdict", "strict": True, "schema": schema}}
    return body


def _anthropic_body(ref: ModelRef, system: str, user: str, schema: dict[str, Any] | None,
                    temperature: float | None, max_tokens: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": ref.model, "max_tokens": max_tokens, "system": system,
                            "messages": [{"role": "user", "content": user}]}
    if temperature is not None:
        body["temperature"] = temperature
    if schema is not None:
        body["tools"] = [{"name": VERDICT_TOOL, "description": "Record the verdict.",
                          "input_schema": schema}]
        body["tool_choice"] = {"type": "tool", "name": VERDICT_TOOL}
    return body


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _parse_openai(data: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None, str | None,
                                                  str | None]:
    # every field may have any shape (an untrusted server): wrong shapes read as absent
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMError("response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise LLMError("response has no choices[0].message object")
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p["text"] for p in content
                          if isinstance(p, dict) and isinstance(p.get("text"), str)) or None
    return (_str(content), None, _str(message.get("refusal")),
            _str(choices[0].get("finish_reason")))


def _parse_anthropic(data: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None,
                                                     str | None, str | None]:
    texts, structured = [], None
    blocks = data.get("content")
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use" and block.get("name") == VERDICT_TOOL:
            found = block.get("input")
            structured = found if isinstance(found, dict) else None
    stop = _str(data.get("stop_reason"))
    refusal = ("\n".join(texts) or "refused") if stop == "refusal" else None
    return ("\n".join(texts) if texts else None), structured, refusal, stop


def _count(value: Any) -> int | None:
    known = run_number(value)
    return int(value) if known is not None and 0 <= known < 1e15 else None


def _usage(data: dict[str, Any]) -> tuple[int | None, int | None, float | None]:
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    tin = _count(usage.get("prompt_tokens", usage.get("input_tokens")))
    tout = _count(usage.get("completion_tokens", usage.get("output_tokens")))
    cost = usage.get("cost")  # some gateways (OpenRouter, LiteLLM) report it
    known = run_number(cost)
    return tin, tout, (known if known is not None and 0 <= known < 1e9 else None)


def _mentions(err: LLMError, *words: str) -> bool:
    return err.status == 400 and any(w in str(err).lower() for w in words)


def request_target(ref: ModelRef) -> tuple[str, dict[str, str]]:
    """(URL, headers) a call to ``ref`` is sent with (the key among the headers)."""
    url, key = endpoint(ref)
    headers = {"content-type": "application/json"}
    if ref.provider == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
    elif key:
        headers["authorization"] = f"Bearer {key}"
    return url, headers


def complete(ref: ModelRef, system: str, user: str, *, schema: dict[str, Any] | None = None,
             temperature: float | None = 0.0, max_tokens: int = 1024,
             policy: RetryPolicy | None = None) -> Completion:
    """One judge call; raise LLMError when it cannot be completed."""
    policy = policy or RetryPolicy()
    no_key = missing_key(ref)
    if no_key:  # at once: no network call, no retries
        raise LLMError(no_key)
    url, headers = request_target(ref)
    warnings: list[str] = []
    with _LOCK:
        if ref.name in _NO_TEMPERATURE:
            temperature = None
        schema_sent = None if ref.name in _NO_SCHEMA else schema
    build = _anthropic_body if ref.provider == "anthropic" else _openai_body
    for _ in range(3):  # at most: as asked, without temperature, without response_format
        body = build(ref, system, user, schema_sent, temperature, max_tokens)
        try:
            data = _post(url, headers, body, policy)
            break
        except LLMError as exc:
            if shown_url(url) not in str(exc):  # every failure names the endpoint it tried
                exc = LLMError(f"{shown_url(url)}: {exc}", exc.status)
            if temperature is not None and _mentions(exc, "temperature"):
                with _LOCK:
                    _NO_TEMPERATURE.add(ref.name)
                warnings.append(f"{ref.name} rejected temperature={temperature:g}; "
                                f"judging at the provider default ({exc})")
                _LOG.warning(warnings[-1])
                temperature = None
                continue
            if schema_sent is not None and ref.provider == "openai" and _mentions(
                    exc, "response_format", "json_schema"):
                with _LOCK:
                    _NO_SCHEMA.add(ref.name)
                warnings.append(f"{ref.name} has no structured output; relying on the prompt")
                _LOG.warning(warnings[-1])
                schema_sent = None
                continue
            raise exc from None
    else:  # pragma: no cover - the loop always breaks or raises
        raise LLMError("request could not be built")
    parse = _parse_anthropic if ref.provider == "anthropic" else _parse_openai
    text, structured, refusal, finish = parse(data)
    tin, tout, cost = _usage(data)
    return Completion(text, structured, refusal, finish, tin, tout, cost, temperature, warnings)
