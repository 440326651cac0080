"""Fixtures of the runner tests: the billing stub (tests/fixtures/billing_stub.py)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from cost_helpers import BillingStub


@pytest.fixture
def billing(monkeypatch: pytest.MonkeyPatch) -> Iterator[BillingStub]:
    """A running billing stub; the judges' endpoints point at it."""
    with BillingStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-key-abcdef")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-judge-key-abcdef")
        yield server
