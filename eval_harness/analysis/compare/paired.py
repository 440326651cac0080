"""Paired mean differences with t intervals, a cluster-robust SE, and Holm's correction.

Paired t: for per-case differences d_1..d_n, d̄ ± t_{n−1, 0.975} · s_d/√n, two-sided
p = 2·P(t_{n−1} > |d̄/(s_d/√n)|); R ``t.test(b, a, paired = TRUE)``.

Cluster-robust (CR1) SE of the mean when cases fall into G clusters (a case tag, e.g.
cases generated from one source document are not independent). For the intercept-only
regression of d on 1 with residuals e_i = d_i − d̄:

    V_CR1 = G/(G−1) · Σ_g (Σ_{i∈g} e_i)² / n²,

the Liang–Zeger sandwich with the small-sample factor G/(G−1)·(n−1)/(n−k) at k = 1 (the
Stata ``vce(cluster)`` / R ``sandwich::vcovCL(type = "HC1")`` convention); the CI uses
t with G−1 df (Cameron & Miller 2015, "A practitioner's guide to cluster-robust
inference", JHR 50:317, §II.C and §VI).

Holm (1979) step-down adjustment, identical to R ``p.adjust(p, "holm")``; NaN p-values
stay out of the family and stay NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.stats.dist import t_ppf, t_sf


@dataclass(frozen=True)
class PairedT:
    """Mean of paired differences with a t-based CI."""

    estimate: float
    se: float
    df: float
    ci: tuple[float, float]
    p: float
    n: int


def _t_summary(estimate: float, se: float, df: float, n: int, level: float) -> PairedT:
    if not (se > 0.0 and math.isfinite(se)) or df < 1:
        # Zero spread: the CI collapses and no test statistic exists.
        ci = (estimate, estimate) if se == 0.0 else (math.nan, math.nan)
        return PairedT(estimate, se, df, ci, math.nan, n)
    q = float(t_ppf(1.0 - (1.0 - level) / 2.0, df))
    p = float(2.0 * t_sf(abs(estimate / se), df))
    return PairedT(estimate, se, df, (estimate - q * se, estimate + q * se), p, n)


def paired_t(diffs: Sequence[float] | np.ndarray, level: float = 0.95) -> PairedT:
    """Paired t summary of per-case differences (NaN entries dropped)."""
    d = np.asarray(diffs, dtype=float)
    d = d[np.isfinite(d)]
    n = int(d.size)
    if n == 0:
        return PairedT(math.nan, math.nan, math.nan, (math.nan, math.nan), math.nan, 0)
    mean = float(d.mean())
    if n < 2:
        return PairedT(mean, math.nan, 0.0, (math.nan, math.nan), math.nan, 1)
    se = float(d.std(ddof=1) / math.sqrt(n))
    if se < 1e-12 * max(1.0, abs(mean)):
        se = 0.0  # rounding residue of a constant difference
    return _t_summary(mean, se, float(n - 1), n, level)


@dataclass(frozen=True)
class ClusterT(PairedT):
    """CR1 cluster-robust summary of a mean: a :class:`PairedT` and its cluster count."""

    n_clusters: int


def cluster_robust_mean(
    diffs: Sequence[float] | np.ndarray, clusters: Sequence[object], level: float = 0.95
) -> ClusterT | None:
    """CR1 SE of the mean of ``diffs`` with cluster labels; None with fewer than 2 clusters."""
    d = np.asarray(diffs, dtype=float)
    labels = np.asarray([str(c) for c in clusters], dtype=object)
    keep = np.isfinite(d)
    d, labels = d[keep], labels[keep]
    n = int(d.size)
    groups = sorted(set(labels.tolist()))
    n_g = len(groups)
    if n_g < 2:
        return None
    mean = float(d.mean())
    resid = d - mean
    sums = np.array([resid[labels == g].sum() for g in groups])
    var = n_g / (n_g - 1) * float((sums**2).sum()) / (n * n)
    se = math.sqrt(max(var, 0.0))
    if se < 1e-12 * max(1.0, abs(mean)):
        se = 0.0
    s = _t_summary(mean, se, float(n_g - 1), n, level)
    return ClusterT(s.estimate, s.se, s.df, s.ci, s.p, n, n_g)


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (R ``p.adjust(p, "holm")``); NaN stays NaN and is
    not counted in the family. One implementation: the ANOVA's ``adjust_pvalues``."""
    from eval_harness.analysis.stats import adjust_pvalues

    return [float(x) for x in adjust_pvalues(list(pvalues), "holm")]
