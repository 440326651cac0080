"""The descriptive tables beside the ANOVA (analysis.anova.descriptives) and the one Pareto
sweep (analysis.anova.condition_summaries.pareto_front): each equals the plain
definition it replaced."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
from tidy_frames import big_frame

from eval_harness.analysis.anova import condition_summaries as cs
from eval_harness.analysis.anova import descriptives as ds
from eval_harness.analysis.compare.verdicts import verdict_tables


def _case_grid_reference(cases: pd.DataFrame, condition_ids: list[str]) -> dict[str, Any]:
    """The row-by-row case grid the vectorised one replaced (same output expected)."""
    by_case: dict[Any, dict[str, Any]] = {}
    for r in cases.itertuples(index=False):
        comp = float(r.composite_mean)
        by_case.setdefault(r.case_id, {})[str(r.condition_id)] = {
            "passes": int(r.n_pass), "attempts": int(r.n_usable),
            "errored_attempts": int(r.n_errored), "verdict": str(r.verdict),
            "composite": comp if math.isfinite(comp) else None}
    rows = []
    for case_id in sorted(by_case):
        cells = by_case[case_id]
        verdicts = {cells[c]["verdict"] if c in cells else "missing" for c in condition_ids}
        comps = [v["composite"] for v in cells.values() if v["composite"] is not None]
        rows.append({"case_id": str(case_id), "differs": len(verdicts) > 1,
                     "mean_composite": float(np.mean(comps)) if comps else None, "cells": cells})
    rows.sort(key=lambda r: (not r["differs"], r["mean_composite"]
                             if r["mean_composite"] is not None else math.inf, r["case_id"]))
    return {"condition_ids": condition_ids, "n_cases": len(rows),
            "n_differing": sum(r["differs"] for r in rows), "cases": rows}


def test_case_grid_equals_the_row_by_row_grid() -> None:
    frame = big_frame((3, 2), 300, seed=11)
    # a missing cell and a case errored everywhere in one condition
    frame = frame[~((frame["case_id"] == "case00007") & (frame["condition_id"] == "cond002"))]
    _, cases = verdict_tables(frame)
    cids = sorted(frame["condition_id"].unique())
    assert ds.case_grid(cases, cids) == _case_grid_reference(cases, cids)


def _marginal_reference(cases: pd.DataFrame, frame: pd.DataFrame,
                        by: list[str]) -> list[dict[str, Any]]:
    """Marginal means grouped on the level strings (what the coded grouping replaced)."""
    from eval_harness.analysis.compare.build import condition_table

    conds = condition_table(frame)[["condition_id", *cs.factors_of(frame)]]
    merged = cases.merge(conds, on="condition_id", how="left")
    merged = merged[merged["verdict"] != "errored"]
    per_case = merged.groupby([*by, "case_id"], sort=False, observed=True)["composite_mean"].mean()
    out = []
    level: int | list[int] = 0 if len(by) == 1 else list(range(len(by)))
    for key, sub in per_case.groupby(level=level, sort=False, observed=True):
        key_t = key if isinstance(key, tuple) else (key,)
        mean, ci = cs.mean_ci(sub.to_numpy(dtype=float))
        out.append({"levels": dict(zip(by, key_t, strict=True)), "mean": mean, "ci": ci})
    order = frame.attrs["levels"]
    out.sort(key=lambda r: tuple(order[f].index(r["levels"][f]) for f in by))
    return out


def test_marginal_means_equal_the_grouping_on_level_strings() -> None:
    frame = big_frame((3, 2, 2), 400, seed=13)
    _, cases = verdict_tables(frame)
    assert (cases["verdict"] == "errored").any()  # errored cells are left out
    cells = ds.usable_cells(cases, frame)
    for by in (["f0"], ["f2"], ["f0", "f1"], ["f1", "f2"]):
        got = ds.marginal_means(cases, frame, by, merged=cells)
        assert got == _marginal_reference(cases, frame, by)  # exactly, floats included
        assert got == ds.marginal_means(cases, frame, by)


def test_case_grid_shares_equal_cells_but_keeps_negative_zero_apart() -> None:
    cases = pd.DataFrame({
        "case_id": ["a", "a", "b", "b"], "condition_id": ["x", "y", "x", "y"],
        "n_pass": [1, 1, 0, 0], "n_usable": [1, 1, 1, 1], "n_errored": [0, 0, 0, 0],
        "verdict": ["passed", "passed", "failed", "failed"],
        "composite_mean": [1.0, 1.0, 0.0, -0.0]})
    grid = ds.case_grid(cases, ["x", "y"])
    cells = {r["case_id"]: r["cells"] for r in grid["cases"]}
    assert cells["a"]["x"] is cells["a"]["y"]  # equal content: one object
    assert cells["b"]["x"] is not cells["b"]["y"]  # 0.0 and -0.0: equal, written apart
    assert json.dumps([cells["b"]["x"]["composite"], cells["b"]["y"]["composite"]]) == \
        "[0.0, -0.0]"
    assert grid == _case_grid_reference(cases, ["x", "y"])


def test_pareto_front_equals_the_pairwise_definition() -> None:
    def brute(points: list[tuple[str, float, float]]) -> list[str]:
        return [pid for pid, c, q in points
                if not any(c2 <= c and q2 >= q and (c2 < c or q2 > q) for _, c2, q2 in points)]

    rng = np.random.default_rng(2)
    for n in (0, 1, 2, 5, 40, 300):
        # few distinct values, so equal costs and equal qualities (ties) are common
        pts = [(f"c{i}", float(rng.integers(0, 6)), float(rng.integers(0, 6))) for i in range(n)]
        assert cs.pareto_front(pts) == brute(pts)
    pts = [(f"c{i}", float(c), float(q)) for i, (c, q) in enumerate(rng.random((300, 2)))]
    assert cs.pareto_front(pts) == brute(pts)


def test_pareto_front_lists_one_of_equal_points_when_asked() -> None:
    pts = [("a", 1.0, 0.5), ("b", 1.0, 0.5), ("c", 2.0, 0.9), ("d", 0.5, 0.2)]
    assert cs.pareto_front(pts) == ["a", "b", "c", "d"]
    assert cs.pareto_front(pts, keep_ties=False) == ["a", "c", "d"]


def test_anova_pareto_is_the_sweep_over_cost_order() -> None:
    def summary(cid: str, cost: float | None, mean: float | None) -> dict[str, Any]:
        return {"condition_id": cid, "cost_mean_usd": cost, "mean": mean}

    block = cs.pareto_frontier([summary("a", 2.0, 0.9), summary("b", 1.0, 0.5),
                                summary("c", 1.0, 0.5), summary("d", 3.0, 0.8),
                                summary("e", None, 1.0)])
    assert block == {"x": "cost_mean_usd", "y": "mean", "frontier": ["b", "a"],
                     "unknown_cost": ["e"]}
    assert cs.pareto_frontier([summary("a", None, 0.5)]) is None
