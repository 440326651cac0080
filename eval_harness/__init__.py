"""eval_harness: factorial experiments over LLM apps, agents and skills, analysed with
mixed-effects ANOVA (case as a random effect), corrections, contrasts and paired comparisons."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def load_runs(path: Any, **kwargs: Any) -> pd.DataFrame:
    """Load run directories under ``path`` into one tidy DataFrame (see docs/statistics.md)."""
    from eval_harness.analysis.loader import load_runs as _load

    return _load(path, **kwargs)


__all__ = ["__version__", "load_runs"]
