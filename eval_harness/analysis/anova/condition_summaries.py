"""Per-condition summaries, the cost-vs-quality Pareto frontier, and errored samples.

Per condition (conditions identified by their levels, in matrix order):

- mean, sd and the 95% t interval over *case means* (replications averaged first, so
  the unit is the case, as in the ANOVA): mean ± t_{0.975, n−1} · sd/√n, n = cases;
- n_samples usable samples, `errored` samples (never scored 0, not in the mean);
- cost: over the samples whose cost is known (an unknown cost is skipped, never read
  as 0): cost_mean = their mean, cost_total = their sum, cost_known_samples = how many of
  the condition's samples that is (a partial total undercounts: compare it with the
  sample count). With no sample cost at all, the run-level totals an importer recorded
  (agent-eval-harness) give cost_total and cost_mean = cost_total / samples; else null.
  The reports' condition tables follow the same rule;
- latency p50 / p95 over samples with a known latency; tokens mean.

Pareto frontier (when costs are known): the conditions not dominated by another with
cost ≤ and mean ≥ (one strictly), i.e. the cheapest way to each quality level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.anova.design_check import finite_or_none
from eval_harness.analysis.stats.dist import t_ppf

MAX_LISTED = 1000


def _rank(levels: Mapping[str, Any], order: Mapping[str, Sequence[Any]]) -> tuple[int, ...]:
    out = []
    for f, v in levels.items():
        lv = list(order.get(f, []))
        out.append(lv.index(v) if v in lv else len(lv))
    return tuple(out)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _pct(x: np.ndarray, q: float) -> float | None:
    x = x[np.isfinite(x)]
    return float(np.percentile(x, q)) if x.size else None


def condition_summaries(
    frame: pd.DataFrame,
    response: str,
    factors: Sequence[str],
    order: Mapping[str, Sequence[Any]],
    run_costs: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """One summary dict per condition observed in `frame` for `response`."""
    # only the columns read below: filtering would copy every column of the frame
    needed = [*factors, "condition_id", "run_id", "case_id", "value", "errored", "cost_usd",
              "tokens", "latency_s"]
    cols = [c for c in dict.fromkeys(needed) if c in frame.columns]
    rows = frame[cols][(frame["judge"] == response).to_numpy(dtype=bool)] if len(frame) else frame
    if rows.empty:
        return []
    cost_by_run = {str(r["run_id"]): float(r["cost_usd"]) for r in run_costs}
    out: list[dict[str, Any]] = []
    groups = rows.groupby(list(factors), sort=False, dropna=False, observed=True) if factors else [((), rows)]
    for key, g in groups:
        key_t = key if isinstance(key, tuple) else (key,)
        levels = {f: _plain(v) for f, v in zip(factors, key_t, strict=True)}
        value = g["value"].to_numpy(dtype=float)
        ok = ~g["errored"].to_numpy(dtype=bool) & np.isfinite(value)
        case_means = pd.Series(value[ok]).groupby(g["case_id"].to_numpy()[ok], sort=False).mean()
        m = case_means.to_numpy()
        n = int(m.size)
        mean = float(m.mean()) if n else math.nan
        sd = float(m.std(ddof=1)) if n >= 2 else math.nan
        half = float(t_ppf(0.975, n - 1) * sd / math.sqrt(n)) if n >= 2 else math.nan
        cost = g["cost_usd"].to_numpy(dtype=float)
        known = cost[np.isfinite(cost)]
        n_rows = len(g)
        cost_total: float | None = None
        cost_mean: float | None = None
        source = None
        if known.size:
            cost_total, cost_mean, source = float(known.sum()), float(known.mean()), "samples"
        else:
            runs = pd.unique(g["run_id"].to_numpy())
            if n_rows and len(runs) and all(str(r) in cost_by_run for r in runs):
                cost_total, source = float(sum(cost_by_run[str(r)] for r in runs)), "runs"
                cost_mean = cost_total / n_rows
        tokens = g["tokens"].to_numpy(dtype=float)
        latency = g["latency_s"].to_numpy(dtype=float)
        out.append({
            "condition_id": str(g["condition_id"].iloc[0]),
            "levels": levels,
            "mean": finite_or_none(mean),
            "sd": finite_or_none(sd),
            "ci": [finite_or_none(mean - half), finite_or_none(mean + half)],
            "n": n,
            "n_samples": int(ok.sum()),
            "errored": int((~ok & g["errored"].to_numpy(dtype=bool)).sum()),
            "cost_total_usd": cost_total,
            "cost_mean_usd": cost_mean,
            "cost_source": source,
            "cost_known_samples": int(known.size),
            "latency_p50_s": _pct(latency, 50),
            "latency_p95_s": _pct(latency, 95),
            "tokens_mean": float(np.nanmean(tokens)) if np.isfinite(tokens).any() else None,
        })
    out.sort(key=lambda s: _rank(s["levels"], order))
    return out


def pareto_frontier(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Cost-vs-quality frontier over conditions with a known cost and mean; None if none."""
    known = [s for s in summaries if s["cost_mean_usd"] is not None and s["mean"] is not None]
    if not known:
        return None
    ranked = sorted(known, key=lambda s: (s["cost_mean_usd"], -s["mean"]))
    frontier, best = [], -math.inf
    for s in ranked:
        if s["mean"] > best:
            frontier.append(s["condition_id"])
            best = s["mean"]
    return {
        "x": "cost_mean_usd",
        "y": "mean",
        "frontier": frontier,
        "unknown_cost": [s["condition_id"] for s in summaries if s["cost_mean_usd"] is None],
    }


def errored_samples(frame: pd.DataFrame, response: str) -> dict[str, Any]:
    """Errored samples of `response` (listed, never scored 0), at most MAX_LISTED shown."""
    if len(frame):
        mine = (frame["judge"] == response).to_numpy(dtype=bool)
        bad = frame[mine & frame["errored"].to_numpy(dtype=bool)]
    else:
        bad = frame
    listed = [
        {"condition_id": str(c), "run_id": str(r), "case_id": str(k), "replication": int(p),
         "case_status": str(s)}
        for c, r, k, p, s in zip(
            bad["condition_id"].to_numpy()[:MAX_LISTED], bad["run_id"].to_numpy()[:MAX_LISTED],
            bad["case_id"].to_numpy()[:MAX_LISTED], bad["replication"].to_numpy()[:MAX_LISTED],
            bad["case_status"].to_numpy()[:MAX_LISTED], strict=True,
        )
    ]
    return {"count": len(bad), "truncated": len(bad) > MAX_LISTED, "samples": listed}
