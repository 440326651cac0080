"""Input errors of the statistics core, inside the project's error tree."""

from __future__ import annotations

from eval_harness.errors import AnalysisError


class StatsInputError(AnalysisError, ValueError):
    """Malformed input to a statistics function (bad shape, unknown method, NaN).

    Also a `ValueError`, so callers that treat invalid arguments generically work.
    """
