"""Fixtures the AEH tests share with the judges' tests (the LLM stub over real HTTP)."""

from __future__ import annotations

from tests.judges.conftest import stub

__all__ = ["stub"]
