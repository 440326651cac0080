"""Two-level bootstrap CI for the mean per-case change in pass rate: cases, then attempts.

The interval is over cases — what a reader takes "Δ pass rate [95% CI]" to mean: how far
the change could be from the one on another sample of cases like these. One resample
(Davison & Hinkley 1997, *Bootstrap Methods and their Application*, §3.8, two-stage
sampling, resampling at both stages):

1. draw C cases with replacement from the C compared cases;
2. within each drawn case, redraw each side's attempts with replacement — n binary
   attempts with k passes redrawn is exactly a Binomial(n, k/n) draw;

    T* = (1/C) · Σ_{j=1..C} (B_b,j/n_b,j − B_a,j/n_a,j),   j = the drawn cases.

The 95% interval is the percentile interval of T* (Efron & Tibshirani 1993, ch. 13).
Stage 1 alone is the case-level paired bootstrap of the per-case differences
d_c = k_b/n_b − k_a/n_a; stage 2 adds the attempt noise on top, which makes the interval
slightly conservative when cases are many (Davison & Hinkley's strategy 2 vs 1), never
degenerate: for a deterministic app (every k ∈ {0, n}) stage 2 draws nothing and the
interval *is* the case-level paired interval (``case_bootstrap_ci``), not [d̄, d̄].

Grouped draws (the same law, far fewer random numbers): cases with the same counts
t = (n_a, k_a, n_b, k_b) are interchangeable, so stage 1 is a Multinomial(C, m_t/C) draw
of how many copies w_t of each count type t enter (m_t = cases of type t), and stage 2
sums w_t iid Binomial(n, k/n) per side, which is one Binomial(w_t·n, k/n) (a sum of w_t·n
iid Bernoulli(k/n)). So a resample costs one multinomial over the types and one binomial
per (type, side) with 0 < k < n — a handful for 5,000 cases of 3 attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.compare.distinct_rows import unique_rows
from eval_harness.analysis.compare.permutation import CaseArrays, Cases
from eval_harness.errors import UsageError

_CHUNK = 4_000_000  # random numbers per chunk (memory bound)
METHOD = "two-level (cases, then attempts within a case) percentile"


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval."""

    lo: float
    hi: float
    level: float
    n_resamples: int
    seed: int


def _check(arrays: CaseArrays) -> None:
    if (arrays.n_a < 1).any() or (arrays.n_b < 1).any() or (arrays.k_a < 0).any() \
            or (arrays.k_b < 0).any() or (arrays.k_a > arrays.n_a).any() \
            or (arrays.k_b > arrays.n_b).any():
        raise UsageError("bootstrap: every case needs n >= 1 and 0 <= k <= n on both sides")


def _case_weights(rng: np.random.Generator, mult: np.ndarray, size: int) -> np.ndarray:
    """(size × types) copies of each count type in a resample of C = Σ mult cases."""
    total = int(mult.sum())
    return rng.multinomial(total, mult / total, size=size)


def bootstrap_distribution(cases: Cases, *, seed: int, n_resamples: int = 2_000) -> np.ndarray:
    """``n_resamples`` draws of T* (module docstring); deterministic for a seed.

    Stage 1 draws from the first child of ``SeedSequence(seed)``, stage 2 from the second,
    so the case draws equal ``case_bootstrap_distribution``'s for the same seed."""
    arrays = CaseArrays.of(cases)
    n_cases = len(arrays)
    if n_cases == 0:
        raise UsageError("bootstrap: no cases")
    _check(arrays)
    # Count types of the cases with attempt noise; the cases without any (both sides
    # k ∈ {0, n}) matter only through d, so they are grouped by d (sorted), first: for a
    # deterministic app the categories are exactly case_bootstrap_distribution's.
    d = arrays.k_b / arrays.n_b - arrays.k_a / arrays.n_a
    noisy = ((arrays.k_a > 0) & (arrays.k_a < arrays.n_a)) \
        | ((arrays.k_b > 0) & (arrays.k_b < arrays.n_b))
    values, value_mult = np.unique(d[~noisy], return_counts=True)
    rows, inverse = unique_rows(*(x[noisy] for x in
                                  (arrays.n_a, arrays.k_a, arrays.n_b, arrays.k_b)))
    types = np.array(rows, dtype=np.int64).reshape(len(rows), 4)
    mult = np.r_[value_mult, np.bincount(inverse, minlength=len(rows))].astype(np.int64)
    # the d-groups come first, as 1-attempt sides with k = 0 (they draw nothing)
    n_a, k_a, n_b, k_b = (np.r_[np.full(len(values), fill, dtype=np.int64), col]
                          for fill, col in zip((1, 0, 1, 0), types.T, strict=True))
    case_rng, attempt_rng = (np.random.default_rng(s)
                             for s in np.random.SeedSequence(seed).spawn(2))
    live_a, live_b = (k_a > 0) & (k_a < n_a), (k_b > 0) & (k_b < n_b)
    # constant sides (k ∈ {0, n}) contribute w·k/n: no draw
    d_const = np.where(live_b, 0.0, k_b / n_b) - np.where(live_a, 0.0, k_a / n_a)
    d_const[:len(values)] = values
    out = np.empty(n_resamples)
    chunk = max(1, _CHUNK // max(1, 3 * len(rows)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        w = _case_weights(case_rng, mult, size)
        total = w @ d_const
        if live_b.any():
            total += (attempt_rng.binomial(w[:, live_b] * n_b[live_b], k_b[live_b] / n_b[live_b])
                      / n_b[live_b]).sum(axis=1)
        if live_a.any():
            total -= (attempt_rng.binomial(w[:, live_a] * n_a[live_a], k_a[live_a] / n_a[live_a])
                      / n_a[live_a]).sum(axis=1)
        out[start:start + size] = total
    return out / n_cases


def case_bootstrap_distribution(diffs: np.ndarray, *, seed: int,
                                n_resamples: int = 2_000) -> np.ndarray:
    """Stage 1 alone: the case-level paired bootstrap of the mean of per-case differences
    ``diffs`` (cases drawn with replacement, grouped by distinct value as above)."""
    d = np.asarray(diffs, dtype=float)
    if not d.size:
        raise UsageError("bootstrap: no cases")
    values, inverse = np.unique(d, return_inverse=True)
    mult = np.bincount(inverse.reshape(-1), minlength=len(values))
    case_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0])
    out = np.empty(n_resamples)
    chunk = max(1, _CHUNK // max(1, len(values)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        out[start:start + size] = _case_weights(case_rng, mult, size) @ values
    return out / d.size


def _percentile(stats: np.ndarray, level: float, n_resamples: int, seed: int) -> BootstrapCI:
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [tail, 1.0 - tail])
    return BootstrapCI(float(lo), float(hi), level, n_resamples, seed)


def _check_args(n_resamples: int, level: float) -> None:
    if n_resamples < 1 or not 0.0 < level < 1.0:
        raise UsageError("bootstrap: need n_resamples >= 1 and 0 < level < 1")


def bootstrap_pass_rate_ci(
    cases: Cases,
    *,
    seed: int,
    n_resamples: int = 2_000,
    level: float = 0.95,
) -> BootstrapCI | None:
    """Two-level percentile CI of the mean per-case change in pass rate; None without
    cases."""
    _check_args(n_resamples, level)
    if not len(cases):
        return None
    stats = bootstrap_distribution(cases, seed=seed, n_resamples=n_resamples)
    return _percentile(stats, level, n_resamples, seed)


def case_bootstrap_ci(diffs: np.ndarray, *, seed: int, n_resamples: int = 2_000,
                      level: float = 0.95) -> BootstrapCI | None:
    """Case-level paired percentile CI of the mean of ``diffs``; None without cases."""
    _check_args(n_resamples, level)
    if not np.asarray(diffs).size:
        return None
    stats = case_bootstrap_distribution(diffs, seed=seed, n_resamples=n_resamples)
    return _percentile(stats, level, n_resamples, seed)
