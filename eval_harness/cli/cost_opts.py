"""Cache and spend flags shared by the run and rescore commands (docs/cost.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


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


def max_spend(args: argparse.Namespace) -> float | None:
    """``--max-spend`` checked (> 0)."""
    from eval_harness.app.run import checked_max_spend

    return checked_max_spend(getattr(args, "max_spend", None))
