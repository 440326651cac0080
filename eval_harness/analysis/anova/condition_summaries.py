"""The per-condition summaries and the cost-vs-quality Pareto front, computed once here
(anova.json and the report) and only rendered by ``eval_harness.reports``; errored samples.

anova.json's ``condition_summaries`` (:func:`condition_summaries`), per condition of the
analysed response (conditions identified by their levels, in matrix order):

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

Pareto frontier (:func:`pareto_front`, the one sweep): the conditions not dominated by
another with cost ≤ and mean ≥ (one strictly), i.e. the cheapest way to each quality
level. anova.json's ``pareto`` (:func:`pareto_frontier`) over the summaries' mean cost,
when costs are known; the report's (:func:`cost_quality_front`) over its rows.

Report rows (:func:`condition_rows`, report.json's ``conditions``), per condition:

- mean and CI: those of the condition summary above (the CI clipped to [0, 1] for the
  composite); without one, per case the mean composite over usable attempts, then the mean
  over cases with a t interval, x̄ ± t_{n−1, 0.975} · s/√n, clipped to [0, 1] (cases are
  the sampling unit; Miller 2024, "Adding Error Bars to Evals");
- pass rate: passes / usable attempts with a Wilson 95% interval (Wilson 1927).
- passed / flaky / failed / errored cases: verdicts of ``analysis.compare.verdicts``.
- p95 latency: linear-interpolated 95th percentile over attempts (numpy default).
- cost: mean per attempt and total over attempts; unknown costs are skipped, never zero.
- pass@k / pass^k (k = 1 .. replications, when there are ≥ 2): the unbiased estimators of
  ``analysis.stats.passk`` per case over its usable attempts (the same pass rule as the
  pass rate), averaged over the cases with at least k usable attempts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_harness._util.numbers import finite_or_none
from eval_harness.analysis.compare.build import condition_table
from eval_harness.analysis.compare.compare import num
from eval_harness.analysis.compare.paired import paired_t
from eval_harness.analysis.compare.wilson import wilson_interval
from eval_harness.analysis.stats.dist import t_ppf
from eval_harness.analysis.stats.passk import condition_pass_k

MAX_LISTED = 1000


def _rank(levels: Mapping[str, Any], order: Mapping[str, Sequence[Any]]) -> tuple[int, ...]:
    out = []
    for f, v in levels.items():
        lv = list(order.get(f, []))
        out.append(lv.index(v) if v in lv else len(lv))
    return tuple(out)


def plain_scalar(v: Any) -> Any:
    """A numpy scalar as the Python value (levels read from a frame)."""
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
        levels = {f: plain_scalar(v) for f, v in zip(factors, key_t, strict=True)}
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


def pareto_front(points: Sequence[tuple[str, float, float]], *, keep_ties: bool = True) -> list[str]:
    """Ids on the cost–quality Pareto frontier: no other point is at most as costly and at
    least as good with one strict inequality. ``points`` = (id, cost, quality), finite;
    the ids keep their input order. ``keep_ties=False``: of points with the same cost and
    quality on the frontier only the first (in input order) is listed (anova.json's
    ``pareto``, one condition per point); the report marks every one of them.

    One sort, then a sweep over costs (O(n log n), not every pair): a point is dominated
    when a strictly cheaper point is at least as good, or an equally costly one is
    strictly better."""
    order = sorted(range(len(points)), key=lambda i: points[i][1])
    dominated = [False] * len(points)
    best_cheaper = -math.inf  # best quality among strictly cheaper points
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and points[order[end]][1] == points[order[start]][1]:
            end += 1
        group = order[start:end]  # one cost
        best_here = max(points[i][2] for i in group)
        listed = False
        for i in group:
            q = points[i][2]
            dominated[i] = best_cheaper >= q or best_here > q or (listed and not keep_ties)
            listed = listed or not dominated[i]
        best_cheaper = max(best_cheaper, best_here)
        start = end
    return [pid for (pid, _, _), out in zip(points, dominated, strict=True) if not out]



def pareto_frontier(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """anova.json's ``pareto``: the cost-vs-quality frontier (:func:`pareto_front`) over the
    conditions with a known cost and mean, cheapest first; None if there are none."""
    known = [s for s in summaries if s["cost_mean_usd"] is not None and s["mean"] is not None]
    if not known:
        return None
    ranked = sorted(known, key=lambda s: (s["cost_mean_usd"], -s["mean"]))
    points = [(s["condition_id"], s["cost_mean_usd"], s["mean"]) for s in ranked]
    return {
        "x": "cost_mean_usd",
        "y": "mean",
        "frontier": pareto_front(points, keep_ties=False),
        "unknown_cost": [s["condition_id"] for s in summaries if s["cost_mean_usd"] is None],
    }


def cost_quality_front(conditions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The report's ``pareto``: mean cost per attempt (or, when a condition with a mean has
    no known cost, p95 latency) against the mean, over the report rows
    (:func:`condition_rows`); every condition at a frontier point is listed, in row order."""
    for axis, key in (("cost_mean_usd", "cost_mean_usd"), ("latency_p95_s", "latency_p95_s")):
        pts = [(c["condition_id"], c[key], c["mean"]) for c in conditions
               if c.get(key) is not None and c.get("mean") is not None]
        if pts and len(pts) == len([c for c in conditions if c.get("mean") is not None]):
            return {"x": axis, "y": "mean", "frontier": pareto_front(pts)}
    return {"x": None, "y": "mean", "frontier": []}


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


def factors_of(frame: pd.DataFrame) -> list[str]:
    """Factor names in matrix writing order (only those present as columns)."""
    return [f for f in frame.attrs.get("factors", []) if f in frame.columns]


def mean_ci(values: np.ndarray) -> tuple[Any, list[Any]]:
    """Mean with a t 95% CI clipped to [0, 1] (None where undefined)."""
    vals = values[np.isfinite(values)]
    if len(vals) == 0:
        return None, [None, None]
    t = paired_t(vals)
    lo, hi = (min(max(x, 0.0), 1.0) if math.isfinite(x) else math.nan for x in t.ci)
    return num(t.estimate), [num(lo), num(hi)]


def max_attempts(cases: pd.DataFrame) -> int:
    """Attempts per (case, condition), errored included: the replications run."""
    if cases.empty:
        return 0
    return int((cases["n_usable"] + cases["n_errored"]).max())


def condition_rows(
    frame: pd.DataFrame, samples: pd.DataFrame, cases: pd.DataFrame,
    conds: pd.DataFrame | None = None, summaries: Any = None, clip: bool = True,
) -> list[dict[str, Any]]:
    """The report's row per condition, in the frame's condition order (see "Report rows"
    in the module docstring): pass rates, verdict counts, latency and cost of the
    attempts, pass@k; ``conds``: ``condition_table(frame)`` when the caller has it.

    ``summaries``: :func:`condition_summaries` of the analysed response (anova.json's
    ``condition_summaries``): a condition's mean and CI are taken from it, the CI clipped
    to [0, 1] when ``clip`` (the response is the composite), so the report and anova.json
    show one number; a condition it lacks (or whose mean is unknown) gets the t interval
    over its case mean composites (:func:`mean_ci`)."""
    by_id = ({str(s.get("condition_id")): s for s in summaries if isinstance(s, Mapping)}
             if isinstance(summaries, list) else {})
    factors = factors_of(frame)
    k_max = max_attempts(cases)
    rows: list[dict[str, Any]] = []
    by_sample = {str(k): g for k, g in samples.groupby("condition_id", sort=False, observed=True)}
    by_case = {str(k): g for k, g in cases.groupby("condition_id", sort=False, observed=True)}
    for cond in (condition_table(frame) if conds is None else conds).to_dict("records"):
        cid = str(cond["condition_id"])
        levels = {f: plain_scalar(cond[f]) for f in factors}
        s = by_sample.get(cid, samples.iloc[:0])
        c = by_case.get(cid, cases.iloc[:0])
        usable = s[~s["errored"]]
        summary = by_id.get(cid)
        if summary and summary.get("mean") is not None:
            mean, ci = summary["mean"], list(summary.get("ci") or [None, None])
            if clip:
                ci = [None if v is None else min(max(v, 0.0), 1.0) for v in ci]
        else:
            mean, ci = mean_ci(c["composite_mean"].to_numpy(dtype=float))
        k, n = int(usable["passed"].sum()), len(usable)
        lo, hi = wilson_interval(k, n)
        lat = s["latency_s"].to_numpy(dtype=float)
        lat = lat[np.isfinite(lat)]
        cost = s["cost_usd"].to_numpy(dtype=float)
        cost = cost[np.isfinite(cost)]
        verdicts = c["verdict"].value_counts()
        rows.append(
            {
                "condition_id": cid,
                "levels": levels,
                "label": ", ".join(f"{f}={v}" for f, v in levels.items()) or cid,
                "n_cases": len(c),
                "n_attempts": len(s),
                "n_errored_attempts": int(s["errored"].sum()),
                "mean": mean,
                "ci": ci,
                "pass_rate": num(k / n) if n else None,
                "pass_ci": [num(lo), num(hi)],
                "passes": k,
                "cases_passed": int(verdicts.get("passed", 0)),
                "cases_flaky": int(verdicts.get("flaky", 0)),
                "cases_failed": int(verdicts.get("failed", 0)),
                "cases_errored": int(verdicts.get("errored", 0)),
                "latency_p95_s": num(float(np.percentile(lat, 95))) if len(lat) else None,
                "latency_mean_s": num(float(lat.mean())) if len(lat) else None,
                "cost_mean_usd": num(float(cost.mean())) if len(cost) else None,
                "cost_total_usd": num(float(cost.sum())) if len(cost) else None,
                "cost_known_attempts": len(cost),
            }
        )
        if k_max >= 2:
            pk = condition_pass_k(c["n_usable"].tolist(), c["n_pass"].tolist(), k_max)
            rows[-1]["pass_k"] = {key: [num(v) if isinstance(v, float) else v for v in vals]
                                  for key, vals in pk.items()}
    return rows
