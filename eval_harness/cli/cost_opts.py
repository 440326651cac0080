"""Cache and spend flags shared by the run and rescore commands (docs/cost.md)."""

from __future__ import annotations

import argparse
import sqlite3
from typing import Any

from eval_harness.cache.settings import resolve
from eval_harness.cache.store import CallCache
from eval_harness.errors import UsageError


def add_cost_flags(g: Any) -> None:
    """``--cache-dir``, ``--no-cache``, ``--cache-refresh``, ``--max-spend``."""
    g.add_argument("--cache-dir", metavar="DIR",
                   help="model-call cache directory (default: $XDG_CACHE_HOME/eval_harness)")
    g.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the model-call cache")
    g.add_argument("--cache-refresh", action="store_true",
                   help="make every model call again and overwrite its cache entry")
    g.add_argument("--max-spend", type=float, metavar="USD",
                   help="stop launching cells once this run's spend would pass USD (exit 3; "
                        "rerun to resume)")


def open_cache(args: argparse.Namespace, exp: Any) -> CallCache | None:
    """The cache this command uses (None: disabled); exit 2 when it cannot be opened."""
    if getattr(args, "no_cache", False) and getattr(args, "cache_refresh", False):
        raise UsageError("--no-cache and --cache-refresh exclude each other",
                         hint="--cache-refresh still writes the cache; --no-cache does not")
    settings = resolve(flag_dir=getattr(args, "cache_dir", None),
                       no_cache=getattr(args, "no_cache", False),
                       refresh=getattr(args, "cache_refresh", False),
                       block=exp.loaded.config.cache, base_dir=exp.loaded.base_dir)
    try:
        return settings.open()
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot open the model-call cache at {settings.directory}: {exc}",
                         hint="pass --cache-dir DIR (writable) or --no-cache") from None


def max_spend(args: argparse.Namespace) -> float | None:
    """``--max-spend`` checked (> 0)."""
    value = getattr(args, "max_spend", None)
    if value is not None and not value > 0:
        raise UsageError("--max-spend must be a positive amount of USD", hint="--max-spend 5")
    return value  # type: ignore[no-any-return]
