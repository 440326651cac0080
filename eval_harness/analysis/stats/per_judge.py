"""Per-judge screen: the same ANOVA for every judge, all (judge, term) p in one BH family.

Each judge's scores are analysed on their own; the raw p of every tested
(judge, term) pair then form ONE Benjamini–Hochberg family (whatever the main
correction), so screening many judges controls the false discovery rate across
them (Benjamini & Hochberg 1995). A judge whose design is degenerate (no term has a
finite p) is listed under `excluded` with the reasons and adds nothing to the family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.stats.correction import adjust_pvalues
from eval_harness.analysis.stats.frame import anova_frame
from eval_harness.analysis.stats.results import AnovaResult


@dataclass(frozen=True)
class JudgeExclusion:
    """A judge left out of the per-judge family."""

    judge: str
    reason: str


@dataclass(frozen=True)
class PerJudgeScreen:
    """Per-judge ANOVAs and BH-adjusted p per (judge, term)."""

    correction: str
    alpha: float
    family_size: int
    results: dict[str, AnovaResult]
    p_adjusted: dict[str, dict[str, float]]
    significant: dict[str, dict[str, bool]]
    excluded: tuple[JudgeExclusion, ...]
    excluded_cases: dict[str, list[dict[str, Any]]]


def per_judge_screen(
    frames: Mapping[str, pd.DataFrame],
    factors: Sequence[str],
    *,
    method: str = "rm",
    response: str = "value",
    case: str = "case_id",
    keep_incomplete: bool = False,
    alpha: float = 0.05,
    levels: Mapping[str, Sequence[Any]] | None = None,
    ddf: str = "kenward-roger",
) -> PerJudgeScreen:
    """Run `anova_frame` per judge and BH-adjust all tested (judge, term) p together
    (`ddf`: the mixed model's denominator df)."""
    results: dict[str, AnovaResult] = {}
    dropped_cases: dict[str, list[dict[str, Any]]] = {}
    excluded: list[JudgeExclusion] = []
    for judge, frame in frames.items():
        res, dropped = anova_frame(
            frame, factors, response=response, case=case, method=method,
            keep_incomplete=keep_incomplete, levels=levels, ddf=ddf,
        )
        dropped_cases[judge] = dropped
        if not res.terms:
            reasons = sorted({e.reason for e in res.excluded_terms}) or ["no terms"]
            excluded.append(JudgeExclusion(judge, "degenerate design: " + "; ".join(reasons)))
            continue
        results[judge] = res
    keys = [(j, t) for j, r in results.items() for t in r.terms]
    raw = np.array([results[j].terms[t].p_raw for j, t in keys], dtype=float)
    adj = adjust_pvalues(raw, "bh") if keys else np.array([])
    p_adjusted: dict[str, dict[str, float]] = {j: {} for j in results}
    significant: dict[str, dict[str, bool]] = {j: {} for j in results}
    for (j, t), p in zip(keys, adj, strict=True):
        p_adjusted[j][t] = float(p)
        significant[j][t] = bool(p < alpha)
    return PerJudgeScreen(
        correction="bh",
        alpha=alpha,
        family_size=int(np.sum(~np.isnan(raw))) if keys else 0,
        results=results,
        p_adjusted=p_adjusted,
        significant=significant,
        excluded=tuple(excluded),
        excluded_cases=dropped_cases,
    )
