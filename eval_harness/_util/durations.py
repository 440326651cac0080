"""Durations written by people: ``90``, ``90s``, ``30m``, ``12h``, ``7d``, ``2w``."""

from __future__ import annotations

import re

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.I)


def parse_duration(text: str | float | int) -> float:
    """Seconds from ``90``, ``90s``, ``30m``, ``12h``, ``7d`` or ``2w``; ValueError otherwise."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise ValueError("a duration cannot be negative")
        return float(text)
    found = _DURATION.match(str(text))
    if not found:
        raise ValueError(f"not a duration: {text!r} (write e.g. 7d, 12h, 30m, 90s)")
    return float(found.group(1)) * _UNITS[(found.group(2) or "s").lower()]
