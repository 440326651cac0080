"""eval_harness: factorial experiments over LLM apps, agents and skills, analysed with
mixed-effects ANOVA (case as a random effect), corrections, contrasts and paired comparisons."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eval_harness._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from eval_harness.api import Analysis, Result, analyze, load_runs, run

#: the public API, imported on first use (``import eval_harness`` stays light for the CLI)
_API = ("run", "analyze", "load_runs", "Result", "Analysis")


def __getattr__(name: str) -> Any:
    if name in _API:
        from eval_harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'eval_harness' has no attribute {name!r}")


__all__ = ["Analysis", "Result", "__version__", "analyze", "load_runs", "run"]
