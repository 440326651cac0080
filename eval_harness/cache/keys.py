"""Cache keys: what makes two model calls the same call.

``call_key`` = SHA-256 over canonical JSON (sorted keys, no whitespace) of::

    {"v": 1, "kind": ..., "provider": ..., "endpoint": <URL without query or user info>,
     "model": ..., "request": <the full request body / argv and parameters>,
     "replication": <replication or sample index>}

Anything in ``request`` changes the key: the prompt, system prompt, temperature,
max_tokens, effort, tools, schema. The replication index is in the key so replications
stay independent samples (replication 2 never reuses replication 1's reply). Headers, and
so API keys, never enter: the caller passes the body, not the headers; the endpoint drops
its query string and ``user:password@`` part, where a key could sit.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from typing import Any

KEY_VERSION = 1


def public_endpoint(url: str) -> str:
    """``url`` without user info, query or fragment (``https://host/v1/chat/completions``)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def call_key(*, kind: str, provider: str, endpoint: str, model: str, request: Any,
             replication: int) -> str:
    """The hex digest naming one call (see the module doc)."""
    payload = {"v": KEY_VERSION, "kind": kind, "provider": provider,
               "endpoint": public_endpoint(endpoint) if "://" in endpoint else endpoint,
               "model": model, "request": request, "replication": replication}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
