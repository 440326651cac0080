"""Issue 37 friction: an LLM judge with OPENAI_API_KEY (or ANTHROPIC_API_KEY) unset says
so at once — no network call, no retries — instead of "network error: Name or service not
known" after three attempts."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from eval_harness.judges.llm.chat_call import LLMError, RetryPolicy, complete
from eval_harness.judges.llm.providers import parse_model


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every name lookup or connection is recorded and fails as on a machine offline."""
    calls: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return calls


@pytest.mark.parametrize(("model", "var"), [("gpt-4.1-nano", "OPENAI_API_KEY"),
                                            ("claude-haiku-4-5", "ANTHROPIC_API_KEY")])
def test_an_unset_key_is_named_at_once(model: str, var: str, no_network: list[Any],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        complete(parse_model(model), "s", "u",
                 policy=RetryPolicy(attempts=3, base_delay=1.0, timeout=5.0))
    assert str(info.value).startswith(f"{var} is not set")
    assert no_network == []  # nothing was sent
    assert time.monotonic() - start < 0.5  # no back-off between retries


def test_a_local_server_needs_no_key(no_network: list[Any],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # an OpenAI-compatible server of one's own (vLLM, Ollama) may take no key: it is tried
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://judge.invalid:8000/v1")
    with pytest.raises(LLMError) as info:
        complete(parse_model("local-model"), "s", "u",
                 policy=RetryPolicy(attempts=1, base_delay=0.0, timeout=1.0))
    assert "is not set" not in str(info.value)
    assert no_network  # it tried the server
