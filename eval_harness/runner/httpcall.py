"""One JSON POST with urllib (stdlib only) and the failure taxonomy of HTTP APIs.

Classification (used by the engine's retry and fail-fast logic):

- network errors, timeouts, 408, 409, 429 and 5xx (incl. Anthropic's 529 overloaded):
  ``transient``, retried with backoff that honours ``Retry-After``;
- 429 (or 400/402/403) whose body says the quota/credit is exhausted (OpenAI
  ``insufficient_quota``, Anthropic ``credit balance is too low``, ``billing``): ``quota``;
- 401 and 403: ``auth``;
- any other 4xx: ``error`` (the request itself is wrong; retrying cannot help).
"""

from __future__ import annotations

import email.utils
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eval_harness.runner.base import Failure

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


def post_json(url: str, payload: Any, headers: Mapping[str, str], timeout: float) -> HttpReply:
    """POST ``payload`` as JSON; never raises for network or HTTP failures."""
    data = json.dumps(payload, default=str).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            text = resp.read().decode("utf-8", "replace")
            status = resp.status
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace") if exc.fp else ""
        failure, reason = classify(exc.code, text)
        return HttpReply(exc.code, None, text, time.monotonic() - start, failure, reason,
                         parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None))
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        why = str(getattr(exc, "reason", None) or exc)
        return HttpReply(None, None, "", time.monotonic() - start, "transient",
                         f"network error: {why}", None)
    latency = time.monotonic() - start
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        return HttpReply(status, None, text, latency, "error",
                         f"malformed output: response is not JSON ({text[:80]!r})", None)
    return HttpReply(status, body, text, latency, "none", None, None)
