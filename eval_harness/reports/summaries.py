"""Per-condition summaries, the case × condition grid and marginal means, from the tidy frame.

Conventions (one per number shown):

- mean composite: per case, the mean over usable attempts; then the mean over cases with
  a t interval, x̄ ± t_{n−1, 0.975} · s/√n, clipped to [0, 1] (cases are the sampling unit;
  Miller 2024, "Adding Error Bars to Evals").
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
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.build import condition_table
from eval_harness.analysis.compare.compare import num
from eval_harness.analysis.compare.paired import paired_t
from eval_harness.analysis.compare.verdicts import VerdictRule
from eval_harness.analysis.compare.verdicts import verdict_tables as _verdict_tables
from eval_harness.analysis.compare.wilson import wilson_interval
from eval_harness.analysis.stats.passk import case_pass_k, condition_pass_k


def factors_of(frame: pd.DataFrame) -> list[str]:
    """Factor names in matrix writing order (only those present as columns)."""
    return [f for f in frame.attrs.get("factors", []) if f in frame.columns]


def _plain(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def mean_ci(values: np.ndarray) -> tuple[Any, list[Any]]:
    """Mean with a t 95% CI clipped to [0, 1] (None where undefined)."""
    vals = values[np.isfinite(values)]
    if len(vals) == 0:
        return None, [None, None]
    t = paired_t(vals)
    lo, hi = (min(max(x, 0.0), 1.0) if math.isfinite(x) else math.nan for x in t.ci)
    return num(t.estimate), [num(lo), num(hi)]


def verdict_tables(
    frame: pd.DataFrame, rule: VerdictRule | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(samples, case verdicts) of ``analysis.compare.verdicts``."""
    return _verdict_tables(frame, rule)


def max_attempts(cases: pd.DataFrame) -> int:
    """Attempts per (case, condition), errored included: the replications run."""
    if cases.empty:
        return 0
    return int((cases["n_usable"] + cases["n_errored"]).max())


def condition_rows(
    frame: pd.DataFrame, samples: pd.DataFrame, cases: pd.DataFrame,
    conds: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """One JSON-ready summary per condition, in matrix order (see module docstring);
    ``conds``: ``condition_table(frame)`` when the caller already has it."""
    factors = factors_of(frame)
    k_max = max_attempts(cases)
    rows: list[dict[str, Any]] = []
    by_sample = {str(k): g for k, g in samples.groupby("condition_id", sort=False, observed=True)}
    by_case = {str(k): g for k, g in cases.groupby("condition_id", sort=False, observed=True)}
    for cond in (condition_table(frame) if conds is None else conds).to_dict("records"):
        cid = str(cond["condition_id"])
        levels = {f: _plain(cond[f]) for f in factors}
        s = by_sample.get(cid, samples.iloc[:0])
        c = by_case.get(cid, cases.iloc[:0])
        usable = s[~s["errored"]]
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


def _distinct(col: pd.Series, convert: Any = None) -> list[Any]:
    """A column as a list of Python objects in which equal values are one object (one
    string per distinct case id, not one per cell), optionally ``convert``-ed once per
    distinct value. Arrow-backed strings iterate element by element through
    ``Series.tolist``; this converts the distinct values only."""
    codes, uniques = pd.factorize(col, use_na_sentinel=False)
    values = uniques.to_numpy(dtype=object).tolist()
    if convert is not None:
        values = [convert(v) for v in values]
    return [values[i] for i in codes.tolist()]


def case_grid(cases: pd.DataFrame, condition_ids: list[str]) -> dict[str, Any]:
    """Case × condition cells: passes/usable attempts, verdict, mean composite (and, with
    ≥ 2 replications, the cell's ``pass_at_k`` / ``pass_hat_k`` lists for k = 1..).

    A case *differs* when its verdicts are not all the same across conditions (an errored
    cell counts as its own verdict). Cases are sorted with differing ones first, then by
    mean composite (hardest first), then id. Cells with equal content are the same dict
    object: treat them as read-only (copy before changing one).
    """
    rows: list[dict[str, Any]] = []
    # whole columns as plain Python lists (numpy .tolist()), zipped: no pandas scalar or
    # row tuple per cell (at 16 conditions x 5,000 cases that was most of build_report)
    comp = cases["composite_mean"].to_numpy(dtype=float)
    comps_col = [v if ok else None for v, ok in zip(comp.tolist(), np.isfinite(comp).tolist(),
                                                    strict=True)]
    columns = (_distinct(cases["case_id"]), _distinct(cases["condition_id"], str),
               cases["n_pass"].to_numpy(dtype=np.int64).tolist(),
               cases["n_usable"].to_numpy(dtype=np.int64).tolist(),
               cases["n_errored"].to_numpy(dtype=np.int64).tolist(),
               _distinct(cases["verdict"], str), comps_col)
    by_case: dict[Any, dict[str, Any]] = {}
    # Equal cells are one shared (read-only) dict: judges score on few levels, so at
    # 16 conditions x 5,000 cases ~80,000 cells hold a few hundred distinct values
    # (-0.0 is told apart from 0.0 so the JSON text stays the same).
    shared: dict[tuple[Any, ...], dict[str, Any]] = {}
    k_max = max_attempts(cases)
    for case_id, cid, k, n, e, verdict, c, neg in zip(*columns, np.signbit(comp).tolist(),
                                                     strict=True):
        key = (k, n, e, verdict, c, neg)
        cell = shared.get(key)
        if cell is None:
            cell = shared[key] = {
                "passes": k,
                "attempts": n,
                "errored_attempts": e,
                "verdict": verdict,
                "composite": c,
            }
            if k_max >= 2:
                cell.update(case_pass_k(n, k, k_max))
        by_case.setdefault(case_id, {})[cid] = cell
    for case_id in sorted(by_case):
        cells = by_case[case_id]
        verdicts = {cells[c]["verdict"] if c in cells else "missing" for c in condition_ids}
        comps = [v["composite"] for v in cells.values() if v["composite"] is not None]
        rows.append(
            {
                "case_id": str(case_id),
                "differs": len(verdicts) > 1,
                "mean_composite": num(float(np.mean(comps))) if comps else None,
                "cells": cells,
            }
        )
    rows.sort(
        key=lambda r: (
            not r["differs"],
            r["mean_composite"] if r["mean_composite"] is not None else math.inf,
            r["case_id"],
        )
    )
    return {
        "condition_ids": condition_ids,
        "n_cases": len(rows),
        "n_differing": sum(r["differs"] for r in rows),
        "cases": rows,
    }


def cell_text(cell: dict[str, Any] | None) -> str:
    """``2/3 ~`` (passes/usable attempts, ``~`` flaky), ``E`` errored, blank when missing."""
    if not cell:
        return ""
    if cell["verdict"] == "errored":
        return "E"
    text = f"{cell['passes']}/{cell['attempts']}"
    if cell["verdict"] == "flaky":
        text += " ~"
    if cell.get("errored_attempts"):
        text += " !"
    return text


class UsableCells(NamedTuple):
    """Non-errored case verdict rows as integer codes (``pd.factorize``: first-seen order,
    -1 = missing) of each factor and of the case id, with ``composite_mean``; ``uniques``
    maps a column to its values by code. Grouping integer codes is the same grouping as
    grouping the values (same groups, same order) without hashing strings every call."""

    codes: pd.DataFrame
    uniques: dict[str, Any]


def usable_cells(cases: pd.DataFrame, frame: pd.DataFrame,
                 conds: pd.DataFrame | None = None) -> UsableCells:
    """The case verdict rows that are not errored, with their condition's factor levels,
    coded once for every :func:`marginal_means` call of a report."""
    factors = factors_of(frame)
    conds = (condition_table(frame) if conds is None else conds)[["condition_id", *factors]]
    merged = cases.merge(conds, on="condition_id", how="left")
    merged = merged[merged["verdict"] != "errored"]
    columns: dict[str, Any] = {}
    uniques: dict[str, Any] = {}
    for col in [*factors, "case_id"]:
        columns[col], uniques[col] = pd.factorize(merged[col])
    columns["composite_mean"] = merged["composite_mean"].to_numpy(dtype=float)
    return UsableCells(pd.DataFrame(columns), uniques)


def marginal_means(
    cases: pd.DataFrame, frame: pd.DataFrame, by: list[str], conds: pd.DataFrame | None = None,
    merged: UsableCells | None = None,
) -> list[dict[str, Any]]:
    """Mean composite per combination of the ``by`` factors, with a t 95% CI over cases.

    Per case the composite is first averaged over the other factors' conditions (the
    marginal mean of a balanced design), so the interval reflects case-to-case spread.
    ``merged``: :func:`usable_cells` of ``cases`` when the caller already built it.
    """
    cells = usable_cells(cases, frame, conds) if merged is None else merged
    order = frame.attrs.get("levels", {})
    out: list[dict[str, Any]] = []
    data = cells.codes
    keys = [*by, "case_id"]
    data = data[(data[keys].to_numpy() >= 0).all(axis=1)]  # a missing value is no group
    if data.empty:
        return out
    per_case = data.groupby(keys, sort=False, observed=True)["composite_mean"].mean()
    # one factor: a scalar level (pandas 2.x warns on a length-1 list; keys are
    # scalars under 2.x and 3.x alike then, tuples otherwise — key_t covers both)
    level: int | list[int] = 0 if len(by) == 1 else list(range(len(by)))
    for key, sub in per_case.groupby(level=level, sort=False, observed=True):
        key_t = key if isinstance(key, tuple) else (key,)
        mean, ci = mean_ci(sub.to_numpy(dtype=float))
        levels = {f: _plain(cells.uniques[f][int(code)]) for f, code in zip(by, key_t, strict=True)}
        out.append({"levels": levels, "mean": mean, "ci": ci})

    def rank(row: dict[str, Any]) -> tuple[int, ...]:
        ranks = []
        for f in by:
            lv = [str(x) for x in order.get(f, [])]
            v = str(row["levels"][f])
            ranks.append(lv.index(v) if v in lv else len(lv))
        return tuple(ranks)

    out.sort(key=rank)
    return out


def pareto_front(points: list[tuple[str, float, float]]) -> list[str]:
    """Ids on the cost–quality Pareto frontier: no other point is at most as costly and at
    least as good with one strict inequality. ``points`` = (id, cost, quality), finite;
    the ids keep their input order.

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
        for i in group:
            q = points[i][2]
            dominated[i] = best_cheaper >= q or best_here > q
        best_cheaper = max(best_cheaper, best_here)
        start = end
    return [pid for (pid, _, _), out in zip(points, dominated, strict=True) if not out]


def judge_means(frame: pd.DataFrame, condition_ids: list[str]) -> dict[str, Any] | None:
    """Mean normalized score of each (non-composite, non-pairwise) judge per condition:
    per case the mean over usable attempts, then the plain mean over cases. Descriptive
    only (the per-judge ANOVA screen is ``--per-judge``); None with fewer than two judges,
    where the composite already says it all."""
    need = {"judge", "kind", "normalized", "errored", "condition_id", "case_id"}
    if not need <= set(frame.columns):
        return None
    norm = frame["normalized"].to_numpy(dtype=float)
    keep = (~frame["kind"].isin(["composite", "pairwise"]).to_numpy(dtype=bool)
            & ~frame["errored"].astype(bool).to_numpy() & np.isfinite(norm))
    names = frame["judge"][keep].unique()  # first-seen order, no text copy of every row
    judges = [str(j) for j in names]
    if len(judges) < 2:
        return None
    # one judge at a time: the same groups, rows in the same order (so the same means)
    # as grouping by (judge, condition, case) at once, at a fraction of the memory
    means: dict[tuple[str, str], float] = {}
    for name, label in zip(names, judges, strict=True):
        rows = keep & (frame["judge"] == name).to_numpy(dtype=bool, na_value=False)
        sub = frame.loc[rows, ["condition_id", "case_id", "normalized"]]
        per_case = sub.groupby(["condition_id", "case_id"], sort=False,
                               observed=True)["normalized"].mean()
        by_cond = per_case.groupby(level="condition_id", sort=False, observed=True).mean()
        means.update({(label, str(c)): v for c, v in by_cond.items()})
    rows_out = [{"condition_id": cid,
                 "means": {j: num(float(means[(j, cid)])) if (j, cid) in means else None
                           for j in judges}}
                for cid in condition_ids]
    return {"judges": judges, "rows": rows_out}
