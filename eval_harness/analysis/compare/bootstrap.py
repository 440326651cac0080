"""Within-case (stratified) bootstrap CI for the mean per-case change in pass rate.

Each case's attempts are resampled with replacement within each side, keeping the set of
cases fixed: resampling n binary attempts with replacement is exactly a Binomial(n, k/n)
draw, so one resample is ``T* = mean_i(B_b,i/n_b,i − B_a,i/n_a,i)`` with independent
binomials — fully vectorised. The 95% interval is the percentile interval of T*
(Efron & Tibshirani 1993, ch. 13). It is conditional on these cases (fixed-case inference,
like the permutation test); the composite paired t CI is the one that treats cases as a
sample from a population.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.compare.permutation import CaseCounts
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


def bootstrap_pass_rate_ci(
    cases: Sequence[CaseCounts],
    *,
    seed: int,
    n_resamples: int = 2_000,
    level: float = 0.95,
) -> BootstrapCI | None:
    """Percentile CI of the mean per-case change in pass rate; None without cases."""
    if n_resamples < 1 or not 0.0 < level < 1.0:
        raise UsageError("bootstrap: need n_resamples >= 1 and 0 < level < 1")
    if not cases:
        return None
    n_a = np.array([c.n_a for c in cases])
    n_b = np.array([c.n_b for c in cases])
    p_a = np.array([c.k_a for c in cases]) / n_a
    p_b = np.array([c.k_b for c in cases]) / n_b
    rng = np.random.default_rng(seed)
    stats = np.empty(n_resamples)
    chunk = max(1, _CHUNK // len(cases))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        draw_a = rng.binomial(n_a, p_a, size=(size, len(cases))) / n_a
        draw_b = rng.binomial(n_b, p_b, size=(size, len(cases))) / n_b
        stats[start : start + size] = (draw_b - draw_a).mean(axis=1)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [tail, 1.0 - tail])
    return BootstrapCI(float(lo), float(hi), level, n_resamples, seed)
