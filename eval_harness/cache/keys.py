"""Cache keys: what makes two model calls the same call.

:func:`call_key` is the one request identity every cached runner and LLM judge uses.
It is the SHA-256 over canonical JSON (sorted keys, no whitespace) of::

    {"v": 2, "kind": ..., "provider": ..., "endpoint": <URL without query or user info>,
     "model": ..., "request": <the full request body / argv and parameters>,
     "replication": <replication or sample index>,
     "private": {<name>: <keyed hash of the value>, ...}}

Anything in ``request`` changes the key: the prompt, system prompt, temperature,
max_tokens, effort, tools, schema. The replication index is in the key so replications
stay independent samples (replication 2 never reuses replication 1's reply).

``private`` holds what shapes the request or selects the account or back end but may be
a secret: every header as sent (``Authorization``, ``x-api-key``, ``X-Backend``, ...), the
full URL when it has a query or ``user:password@`` part, a process runner's raw argv and
the environment it is given. Each value enters only as HMAC-SHA256 under the cache's own
key (:func:`identity_secret`, a 0600 file beside the database, never in it), so two
levels differing only in a header or an API key never share a reply, and neither the
database nor the key it stores says which credential was used.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

KEY_VERSION = 2
SECRET_FILE = "identity.key"


def public_endpoint(url: str) -> str:
    """``url`` without user info, query or fragment (``https://host/v1/chat/completions``)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def identity_secret(directory: Path) -> bytes:
    """The cache directory's HMAC key (``identity.key``, 32 random bytes, mode 0600),
    created on first use (atomically: concurrent processes agree on one). A directory we
    cannot write gets a key for this process only: its lookups all miss, never hit wrong."""
    path = directory / SECRET_FILE
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    fresh = secrets.token_bytes(32)
    tmp = directory / f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(fresh)
        try:
            os.link(tmp, path)  # fails if another process won the race: use its key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        data = path.read_bytes()
        return data if len(data) >= 32 else fresh
    except OSError:
        return fresh


def call_key(*, kind: str, provider: str, endpoint: str, model: str, request: Any,
             replication: int, private: Mapping[str, str], secret: bytes) -> str:
    """The hex digest naming one call (see the module doc). ``endpoint`` is the URL as
    called (or a runner's name); ``private`` the headers / argv / environment as sent,
    entered as keyed hashes under ``secret``."""
    public = public_endpoint(endpoint) if "://" in endpoint else endpoint
    hidden = dict(private)
    if public != endpoint:  # a query or user info may select the account: keyed, not clear
        hidden["url"] = endpoint
    payload = {"v": KEY_VERSION, "kind": kind, "provider": provider, "endpoint": public,
               "model": model, "request": request, "replication": replication,
               "private": {name: hmac.new(secret, str(value).encode("utf-8"),
                                          hashlib.sha256).hexdigest()
                           for name, value in hidden.items()}}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
