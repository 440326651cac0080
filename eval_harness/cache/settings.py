"""Which cache a run uses: ``--cache-dir`` / ``--no-cache`` / ``--cache-refresh`` over the
``cache:`` block over the environment (docs/cost.md).

Directory precedence: ``--cache-dir`` › ``cache.dir`` (relative to the config file) ›
``$EVAL_HARNESS_CACHE_DIR`` › ``$XDG_CACHE_HOME/eval_harness`` › ``~/.cache/eval_harness``.
``$EVAL_HARNESS_CACHE=off`` disables it like ``--no-cache`` (for scripts and CI).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from eval_harness._util.durations import parse_duration
from eval_harness.cache.store import CallCache, default_dir


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
