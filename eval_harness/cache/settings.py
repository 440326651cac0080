"""Which cache a run uses: ``--cache-dir`` / ``--no-cache`` / ``--cache-refresh`` over the
``cache:`` block over the environment (docs/cost.md).

Directory precedence: ``--cache-dir`` › ``cache.dir`` (relative to the config file) ›
``$EVAL_HARNESS_CACHE_DIR`` › ``$XDG_CACHE_HOME/eval_harness`` › ``~/.cache/eval_harness``.
``$EVAL_HARNESS_CACHE=off`` disables it like ``--no-cache`` (for scripts and CI).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from eval_harness.cache.store import CallCache, default_dir

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


@dataclass(frozen=True)
class CacheSettings:
    """The resolved choice."""

    enabled: bool
    directory: Path
    expire_s: float | None
    refresh: bool

    def open(self) -> CallCache | None:
        """The cache, or None when disabled."""
        if not self.enabled:
            return None
        return CallCache(self.directory, expire_s=self.expire_s, refresh=self.refresh)


def resolve(*, flag_dir: str | None = None, no_cache: bool = False, refresh: bool = False,
            block: object | None = None, base_dir: Path | None = None) -> CacheSettings:
    """Settings from the flags, the config's ``cache`` block (a CacheBlock or None) and the
    environment."""
    enabled = not no_cache and os.environ.get("EVAL_HARNESS_CACHE", "").lower() not in (
        "off", "0", "false", "no")
    if block is not None and getattr(block, "enabled", True) is False:
        enabled = False
    configured = getattr(block, "dir", None) if block is not None else None
    if flag_dir:
        directory = Path(flag_dir).expanduser()
    elif configured:
        directory = Path(str(configured)).expanduser()
        if not directory.is_absolute() and base_dir is not None:
            directory = base_dir / directory
    else:
        directory = default_dir()
    expire = getattr(block, "expire", None) if block is not None else None
    return CacheSettings(enabled, directory,
                         parse_duration(expire) if expire is not None else None, refresh)
