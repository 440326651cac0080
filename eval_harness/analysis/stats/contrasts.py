"""Pairwise contrasts of marginal means of one factor (balanced designs).

For each case i, m_i(a) is the mean of its cells at level a of the factor, averaged
over the other factors (or taken at fixed levels of some, `within`). For each pair
(a, b), in level order, the estimate is d̄ = mean_i (m_i(a) − m_i(b)).

rm — paired t on per-case differences (Maxwell, Delaney & Kelley 2018, ch. 11;
     R: `emmeans(afex_fit, pairwise ~ A, model = "multivariate")`):
        SE = s_d / √n,  df = n − 1.
lmm — pooled-error t of the random-intercept model (R: `emmeans(lmer_fit, pairwise ~ A)`
     with `lmer.df = "satterthwaite"`): the case effect cancels inside a case, so
        SE = √(2 σ² / (n · m)),  m = cells averaged per marginal mean,
     df = (C − 1)(n − 1), or C (n − 1) when σ²_case is on the REML boundary.

The family of a correction is the pairs of that one factor (never pooled across factors).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eval_harness.analysis.stats.balanced import (
    CONSTANT_REL,
    REL_ZERO,
    check_method,
    too_large,
    variance_components,
)
from eval_harness.analysis.stats.correction import adjust_pvalues, canonical_correction
from eval_harness.analysis.stats.dist import t_ppf, t_sf
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.results import Contrast
from eval_harness.analysis.stats.sums import design_sums


def _marginal(
    y: np.ndarray,
    factors: Sequence[str],
    levels: Sequence[Sequence[Any]],
    factor: str,
    within: Mapping[str, object] | None,
) -> tuple[np.ndarray, int]:
    """Per-case marginal means (n, L_f) and the number of cells averaged in each."""
    if factor not in factors:
        raise StatsInputError(f"unknown factor {factor!r}; factors are {list(factors)}")
    index: list[Any] = [slice(None)] * y.ndim
    for name, level in (within or {}).items():
        if name == factor or name not in factors:
            raise StatsInputError(f"`within` names {name!r}, which is not another factor")
        j = list(factors).index(name)
        if level not in list(levels[j]):
            raise StatsInputError(f"level {level!r} is not a level of {name!r}")
        index[j + 1] = list(levels[j]).index(level)
    sub = y[tuple(index)]
    kept = [f for f in factors if f not in (within or {})]
    target = kept.index(factor) + 1
    sub = np.moveaxis(sub, target, 1)
    marg = sub.reshape(sub.shape[0], sub.shape[1], -1)
    return marg.mean(axis=2), marg.shape[2]


def pairwise_contrasts(
    Y: np.ndarray,
    factors: Sequence[str],
    levels: Sequence[Sequence[Any]],
    factor: str,
    method: str = "rm",
    correction: str = "holm",
    alpha: float = 0.05,
    within: Mapping[str, object] | None = None,
    conf_level: float = 0.95,
) -> list[Contrast]:
    """All pairs a < b (level order) of `factor`: estimate a − b, SE, df, CI, t, p.

    A pair whose differences have no variance (SE zero) has no test: t and p are NaN
    and it is not counted in the correction family.
    """
    method = check_method(method)
    kind = canonical_correction(correction)
    y = np.asarray(Y, dtype=float)
    if y.ndim != len(factors) + 1 or y.shape[1:] != tuple(len(lv) for lv in levels):
        raise StatsInputError(f"Y has shape {y.shape}, which does not match the levels")
    if too_large(y):  # no finite sums of squares: every pair untested (NaN)
        y = np.full_like(y, np.nan)
    n = y.shape[0]
    marg, cells_per_mean = _marginal(y, factors, levels, factor, within)
    lv = list(levels[list(factors).index(factor)])
    # "no variation" is judged against the within-case variation (see balanced.zero_tolerance)
    flat = y.reshape(n, -1)
    within_ss = float(((flat - flat.mean(axis=1, keepdims=True)) ** 2).sum())
    if not within_ss > CONSTANT_REL * float((flat**2).sum()):
        within_ss = 0.0
    rows: list[tuple[Any, Any, float, float, float]] = []
    if method == "lmm" and n >= 2:
        comp = variance_components(design_sums(y, len(factors)))
        c = int(np.prod(y.shape[1:]))
        df_pool = float(c * (n - 1) if bool(comp.boundary) else (c - 1) * (n - 1))
        se_pool = float(np.sqrt(2.0 * float(comp.residual) / (n * cells_per_mean)))
    for i in range(len(lv)):
        for j in range(i + 1, len(lv)):
            d = marg[:, i] - marg[:, j]
            est = float(d.mean()) if n else float("nan")
            ss_d = float(((d - est) ** 2).sum()) if n else 0.0
            if n < 2:
                se, df = float("nan"), float("nan")
            elif method == "rm":
                zero = within_ss == 0.0 or ss_d <= REL_ZERO * within_ss
                se = 0.0 if zero else float(np.sqrt(ss_d / (n - 1) / n))
                df = float(n - 1)
            else:
                real = within_ss > 0.0 and float(comp.residual) > REL_ZERO * within_ss / (c * n)
                se = se_pool if real else 0.0
                df = df_pool
            rows.append((lv[i], lv[j], est, se, df))
    with np.errstate(all="ignore"):
        t_vals = np.array([r[2] / r[3] if r[3] > 0 else np.nan for r in rows])
        dfs = np.array([r[4] for r in rows])
        p_raw = 2.0 * t_sf(np.abs(t_vals), dfs)
        half = t_ppf(0.5 + conf_level / 2.0, dfs) * np.array([r[3] for r in rows])
    p_adj = adjust_pvalues(p_raw, kind) if rows else np.array([])
    out = []
    for k, (a, b, est, se, df) in enumerate(rows):
        ok = np.isfinite(p_raw[k])
        out.append(
            Contrast(
                a=a,
                b=b,
                estimate=est,
                se=se,
                df=df,
                ci_low=float(est - half[k]) if ok else float("nan"),
                ci_high=float(est + half[k]) if ok else float("nan"),
                t=float(t_vals[k]),
                p_raw=float(p_raw[k]),
                p_adjusted=float(p_adj[k]),
                significant=bool(ok and p_adj[k] < alpha),
            )
        )
    return out
