"""Shared fixture: the LLM stub over real HTTP on 127.0.0.1 (helpers: judge_helpers.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))

from llm_stub import LLMStub

from eval_harness.judges.llm.chat_call import reset_capabilities


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMStub]:
    """A running stub; both providers' base URLs point at it."""
    reset_capabilities()
    with LLMStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test")
        yield server
    reset_capabilities()
