"""Shared pydantic base for every eval.yaml block: unknown keys are errors."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Block(BaseModel):
    """A config block: frozen after load, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
