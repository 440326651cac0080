"""Finite numbers out of untrusted values (run data, JSON, templates): one place for the two
readings the code needs, so every reader treats NaN, ±inf, booleans and text alike."""

from __future__ import annotations

import math
from typing import Any


def run_number(x: Any) -> float | None:
    """A finite int/float as float, else None. Strict, for run data: a boolean is a verdict,
    not a number, and text is never parsed."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        f = float(x)
    except OverflowError:  # an int past float range (JSON allows any length)
        return None
    return f if math.isfinite(f) else None


def as_finite(x: Any) -> float | None:
    """``float(x)`` when that is finite, else None. Lenient, for display and metrics: numeric
    text and numpy scalars are read too."""
    try:
        f = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None
