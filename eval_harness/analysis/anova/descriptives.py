"""Descriptive tables beside the ANOVA, for the report: the case × condition grid,
marginal mean composites (main effects, two-factor interactions) and per-judge means.
Computed here; ``eval_harness.reports`` renders them."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from eval_harness.analysis.anova.condition_summaries import (
    factors_of,
    max_attempts,
    mean_ci,
    plain_scalar,
)
from eval_harness.analysis.compare.build import condition_table
from eval_harness.analysis.compare.compare import num
from eval_harness.analysis.stats.passk import case_pass_k


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
        levels = {f: plain_scalar(cells.uniques[f][int(code)]) for f, code in zip(by, key_t, strict=True)}
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
