"""Finite numbers: the one place every reader of a number that may be NaN, ±inf, a boolean
or text goes through, so they all treat those alike. Three readings: :func:`run_number`
(strict, untrusted run data), :func:`as_finite` (lenient, display and metrics) and
:func:`finite_or_none` (computed statistics: a value that is no number at all is a bug and
raises)."""

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


def finite_or_none(x: Any) -> float | None:
    """JSON-safe float of a computed value: None for None, NaN and ±inf. Unlike
    :func:`as_finite`, a value ``float()`` cannot read (text, an object) raises — in the
    statistics that is a bug to surface, not data to hide."""
    if x is None:
        return None
    return as_finite(float(x))
