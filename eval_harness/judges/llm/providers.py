"""Judge model names and endpoints.

``provider:model`` names the back end (``openai:gpt-4.1-nano``, ``anthropic:claude-haiku-4-5``);
a bare name is inferred: ``claude-*`` -> anthropic, anything else -> openai. Endpoints and
keys: the judge's own ``base_url`` / ``api_key``, else ``models.judge_base_url`` /
``models.judge_api_key``, else the environment at call time: ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``; any OpenAI-compatible server: vLLM, Ollama, a local stub) /
``OPENAI_API_KEY`` and ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``) /
``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

PROVIDERS = ("openai", "anthropic")


@dataclass(frozen=True)
class ModelRef:
    """A judge model on one back end."""

    provider: str
    model: str
    base_url: str | None = None  # the judge's or models.judge_base_url; None: environment
    api_key: str | None = None  # resolved from ${VAR}; None: environment

    @property
    def name(self) -> str:
        """``provider:model``."""
        return f"{self.provider}:{self.model}"


def parse_model(text: str) -> ModelRef:
    """``provider:model`` or a bare name (``claude-*`` -> anthropic, else openai)."""
    head, sep, tail = text.partition(":")
    if sep and head in PROVIDERS and tail:
        return ModelRef(head, tail)
    return ModelRef("anthropic" if text.startswith("claude") else "openai", text)


def endpoint(ref: ModelRef, env: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """(URL of the completion endpoint, API key or None)."""
    environ = os.environ if env is None else env
    if ref.provider == "anthropic":
        base = ref.base_url or environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
        base = base.rstrip("/")
        url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        return url, ref.api_key or environ.get("ANTHROPIC_API_KEY")
    base = (ref.base_url or environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
    return base + "/chat/completions", ref.api_key or environ.get("OPENAI_API_KEY")


#: the providers' own endpoints: a call to one of them without a key cannot succeed
OFFICIAL_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}


def missing_key(ref: ModelRef, env: Mapping[str, str] | None = None) -> str | None:
    """Why a call to ``ref`` cannot succeed before it is sent: its provider's own endpoint
    and no key anywhere (the judge's ``api_key``, ``models.judge_api_key``, the
    environment). None when a key is there, or the endpoint is another server (a local
    OpenAI-compatible one may need none)."""
    from urllib.parse import urlsplit

    url, key = endpoint(ref, env)
    if key or urlsplit(url).hostname != OFFICIAL_HOSTS.get(ref.provider):
        return None
    var = "ANTHROPIC_API_KEY" if ref.provider == "anthropic" else "OPENAI_API_KEY"
    base = "ANTHROPIC_BASE_URL" if ref.provider == "anthropic" else "OPENAI_BASE_URL"
    return (f"{var} is not set: judge model {ref.name} at {shown_url(url)} needs a key "
            f"(export {var}, or set models.judge_api_key / the judge's api_key as "
            f"${{VAR}}; a local server: set {base})")


def shown_url(url: str) -> str:
    """``url`` for messages: no user info, no query (where keys hide)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url
