"""One JSON POST with urllib (stdlib only) and the failure taxonomy of HTTP APIs.

Classification (used by the engine's retry and fail-fast logic):

- network errors, timeouts, 408, 409, 429 and 5xx (incl. Anthropic's 529 overloaded):
  ``transient``, retried with backoff that honours ``Retry-After``;
- 429 (or 400/402/403) whose body says the quota/credit is exhausted (OpenAI
  ``insufficient_quota``, Anthropic ``credit balance is too low``, ``billing``): ``quota``;
- 401 and 403: ``auth``;
- any other 4xx: ``error`` (the request itself is wrong; retrying cannot help);
- a redirect or an over-size reply: ``error``; a header with a line break: ``auth``
  (the credential itself is malformed: fail fast rather than error every cell).
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eval_harness._util.http_post import MAX_RESPONSE_BYTES, TransportError, post
from eval_harness._util.untrusted_json import loads_reply
from eval_harness.runner.contract import Failure

_QUOTA = re.compile(r"insufficient_quota|credit balance|quota exceeded|exceeded your current quota"
                    r"|billing|out of credits", re.I)


@dataclass(frozen=True)
class HttpReply:
    """Outcome of one POST."""

    status: int | None  # None: no HTTP response at all
    body: Any  # parsed JSON, or None
    text: str
    latency_s: float
    failure: Failure
    reason: str | None
    retry_after: float | None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(status: int, text: str) -> tuple[Failure, str]:
    """Failure kind and a short reason for an HTTP error status."""
    snippet = " ".join(text.split())[:200]
    if status in (429, 400, 402, 403) and _QUOTA.search(text):
        return "quota", f"HTTP {status} quota exhausted: {snippet}"
    if status in (401, 403):
        return "auth", f"HTTP {status} authentication failed: {snippet}"
    if status in (408, 409, 429) or status >= 500:
        return "transient", f"HTTP {status}: {snippet}"
    return "error", f"HTTP {status}: {snippet}"


#: statuses meaning "slow down": the engine's adaptive limiter halves its level on them
RATE_LIMIT_STATUSES = (429, 529)
_RATE_LIMITED = re.compile(r"^HTTP (" + "|".join(map(str, RATE_LIMIT_STATUSES)) + r")\b")


def is_rate_limited(failure: str, reason: str | None) -> bool:
    """True for a transient failure that :func:`classify` made from a 429 / 529 reply."""
    return failure == "transient" and bool(reason) and bool(_RATE_LIMITED.match(reason or ""))


def post_json(url: str, payload: Any, headers: Mapping[str, str], timeout: float,
              max_bytes: int = MAX_RESPONSE_BYTES) -> HttpReply:
    """POST ``payload`` as JSON; never raises for network or HTTP failures.

    ``timeout`` is a wall-clock deadline for the whole call; redirects are refused and the
    body is capped at ``max_bytes`` (see :mod:`eval_harness._util.http_post`)."""
    data = json.dumps(payload, default=str).encode("utf-8")
    start = time.monotonic()
    try:
        raw = post(url, data, {"Content-Type": "application/json", **headers},
                   deadline_s=timeout, max_bytes=max_bytes)
    except TransportError as exc:
        failure: Failure = ("transient" if exc.transient
                            else "auth" if exc.kind == "header" else "error")
        return HttpReply(None, None, "", time.monotonic() - start, failure, str(exc), None)
    text = raw.body.decode("utf-8", "replace")
    latency = time.monotonic() - start
    if raw.status >= 400:
        failure, reason = classify(raw.status, text)
        return HttpReply(raw.status, None, text, latency, failure, reason,
                         parse_retry_after(raw.headers.get("Retry-After")))
    try:
        body = loads_reply(text) if text.strip() else None
    except ValueError as exc:
        why = str(exc) if "nested" in str(exc) else f"response is not JSON ({text[:80]!r})"
        return HttpReply(raw.status, None, text, latency, "error", f"malformed output: {why}",
                         None)
    return HttpReply(raw.status, body, text, latency, "none", None, None)
