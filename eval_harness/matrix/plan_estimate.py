"""Cost and time estimates for a planned matrix (pure arithmetic)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class History:
    """What earlier runs of the same eval tell about one run."""

    n_records: int
    mean_cost_usd: float | None  # over records with a known cost
    mean_latency_s: float | None


def estimate_cost(
    total_runs: int, *, avg_cost_per_run: float | None, max_budget_usd: float | None,
    history: History | None, concurrency: int,
) -> dict[str, Any]:
    """Point estimate from ``--avg-cost-per-run`` (else from earlier runs), otherwise an
    upper bound from ``execution.max_budget_usd``; time from earlier latencies."""
    out: dict[str, Any] = {"cost_usd": None, "cost_kind": "unknown", "cost_source": None,
                           "upper_bound_usd": None, "time_s": None}
    if avg_cost_per_run is not None:
        out.update(cost_usd=avg_cost_per_run * total_runs, cost_kind="point",
                   cost_source="--avg-cost-per-run")
    elif history is not None and history.mean_cost_usd is not None:
        out.update(cost_usd=history.mean_cost_usd * total_runs, cost_kind="point",
                   cost_source=f"mean of {history.n_records} earlier runs")
    if max_budget_usd is not None:
        out["upper_bound_usd"] = max_budget_usd * total_runs
        if out["cost_kind"] == "unknown":
            out.update(cost_kind="upper-bound", cost_source="execution.max_budget_usd")
    if history is not None and history.mean_latency_s is not None:
        out["time_s"] = history.mean_latency_s * total_runs / max(1, concurrency)
    return out
