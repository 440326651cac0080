"""Replication noise: pooled within-(condition, case) variance across replications.

    σ²_rep = Σ_g Σ_r (y_gr − ȳ_g)² / Σ_g (n_g − 1)

over groups g = (case, condition) with n_g ≥ 1 replications (groups with one
replication contribute nothing). This is the one-way ANOVA within-group mean square
(Searle, Casella & McCulloch 1992, ch. 3); it is the σ² of Miller (2024) "Adding Error
Bars to Evals" used for the minimum detectable effect with K replications.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from eval_harness.analysis.stats.input_errors import StatsInputError


def replication_variance(
    df_rep: pd.DataFrame,
    factors: Sequence[str],
    *,
    response: str = "value",
    case: str = "case_id",
) -> float | None:
    """Pooled replication variance, or None when no cell has two or more replications."""
    missing = [c for c in (case, response, *factors) if c not in df_rep.columns]
    if missing:
        raise StatsInputError(f"missing column(s) {missing} in the replication data")
    data = df_rep[[case, *factors, response]].dropna(subset=[response])
    groups = data.groupby([case, *factors], sort=False, observed=True)[response]
    dev = data[response] - groups.transform("mean")
    dof = int((groups.size() - 1).sum())
    if dof <= 0:
        return None
    return float((dev**2).sum()) / dof
