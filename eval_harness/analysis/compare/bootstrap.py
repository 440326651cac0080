"""Within-case (stratified) bootstrap CI for the mean per-case change in pass rate.

Each case's attempts are resampled with replacement within each side, keeping the set of
cases fixed: resampling n binary attempts with replacement is exactly a Binomial(n, k/n)
draw, so one resample of C cases is

    T* = (1/C) · Σ_i (B_b,i/n_b,i − B_a,i/n_a,i),   B_s,i ~ Binomial(n_s,i, k_s,i/n_s,i),

all binomials independent. The 95% interval is the percentile interval of T*
(Efron & Tibshirani 1993, ch. 13). It is conditional on these cases (fixed-case inference,
like the permutation test); the composite paired t CI is the one that treats cases as a
sample from a population.

Grouped draws: cases of one side that share (n, k) are iid, and the sum of m independent
Binomial(n, p) is Binomial(m·n, p) (a sum of m·n iid Bernoulli(p)), so

    Σ_{i: (n_i, k_i) = (n, k)} B_i / n_i  =  X_(n,k) / n,   X_(n,k) ~ Binomial(m_(n,k)·n, k/n),

and T* = (1/C) · (Σ_g X_b,g/n_g − Σ_g X_a,g/n_g) over the distinct (n, k) groups g of each
side — the same law as the per-case draw, with one binomial per group and resample
(a handful for 5,000 cases of 3 attempts: at most (n+1) groups per attempt count)
instead of one per case. Groups with k ∈ {0, n} are constant and are not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.compare.keys import unique_rows
from eval_harness.analysis.compare.permutation import CaseArrays, Cases
from eval_harness.errors import UsageError

_CHUNK = 4_000_000  # binomial draws per chunk (memory bound)


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval."""

    lo: float
    hi: float
    level: float
    n_resamples: int
    seed: int


def _groups(n: np.ndarray, k: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One side: Σ k/n over the constant groups (k ∈ {0, n}), and for the others the
    binomial sizes m·n, probabilities k/n and the divisor n (see the module docstring)."""
    rows, inverse = unique_rows(n, k)
    pairs = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
    mult = np.bincount(inverse, minlength=len(rows))
    gn, gk = pairs[:, 0], pairs[:, 1]
    fixed = (gk == 0) | (gk == gn)
    constant = float(np.sum(mult[fixed] * (gk[fixed] // gn[fixed])))
    live = ~fixed
    return constant, mult[live] * gn[live], gk[live] / gn[live], gn[live].astype(float)


def bootstrap_distribution(cases: Cases, *, seed: int, n_resamples: int = 2_000) -> np.ndarray:
    """``n_resamples`` draws of T* (module docstring), one binomial per (side, (n, k))
    group and resample; deterministic for a seed. Memory ~ n_resamples × groups."""
    arrays = CaseArrays.of(cases)
    n_cases = len(arrays)
    if n_cases == 0:
        raise UsageError("bootstrap: no cases")
    if (arrays.n_a < 1).any() or (arrays.n_b < 1).any() or (arrays.k_a < 0).any() \
            or (arrays.k_b < 0).any() or (arrays.k_a > arrays.n_a).any() \
            or (arrays.k_b > arrays.n_b).any():
        raise UsageError("bootstrap: every case needs n >= 1 and 0 <= k <= n on both sides")
    const_a, size_a, p_a, div_a = _groups(arrays.n_a, arrays.k_a)
    const_b, size_b, p_b, div_b = _groups(arrays.n_b, arrays.k_b)
    rng = np.random.default_rng(seed)
    sums = np.empty(n_resamples)
    chunk = max(1, _CHUNK // max(1, size_a.size + size_b.size))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        draw_a = (rng.binomial(size_a, p_a, size=(size, size_a.size)) / div_a).sum(axis=1)
        draw_b = (rng.binomial(size_b, p_b, size=(size, size_b.size)) / div_b).sum(axis=1)
        sums[start : start + size] = draw_b - draw_a
    return (sums + (const_b - const_a)) / n_cases


def bootstrap_pass_rate_ci(
    cases: Cases,
    *,
    seed: int,
    n_resamples: int = 2_000,
    level: float = 0.95,
) -> BootstrapCI | None:
    """Percentile CI of the mean per-case change in pass rate; None without cases."""
    if n_resamples < 1 or not 0.0 < level < 1.0:
        raise UsageError("bootstrap: need n_resamples >= 1 and 0 < level < 1")
    if not len(cases):
        return None
    stats = bootstrap_distribution(cases, seed=seed, n_resamples=n_resamples)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [tail, 1.0 - tail])
    return BootstrapCI(float(lo), float(hi), level, n_resamples, seed)
