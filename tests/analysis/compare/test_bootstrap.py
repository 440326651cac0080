"""Within-case bootstrap drawn per (n, k) group: the same law as one draw per case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import ks_2samp

from eval_harness.analysis.compare.bootstrap import (
    bootstrap_distribution,
    bootstrap_pass_rate_ci,
    case_bootstrap_ci,
)
from eval_harness.analysis.compare.permutation import CaseArrays, CaseCounts
from eval_harness.errors import UsageError


def _cases(n_cases: int, seed: int) -> CaseArrays:
    """Mixed attempt counts (1 to 8, different per side) and pass counts, incl. k in {0, n}."""
    rng = np.random.default_rng(seed)
    n_a = rng.choice([1, 2, 3, 5, 8], size=n_cases)
    n_b = rng.choice([1, 3, 4], size=n_cases)
    k_a = rng.binomial(n_a, 0.6)
    k_b = rng.binomial(n_b, 0.45)
    return CaseArrays(n_a, k_a, n_b, k_b)


def _per_case(cases: CaseArrays, seed: int, n_resamples: int) -> np.ndarray:
    """The textbook two-level draw: C case indices with replacement, then one
    Binomial(n_i, k_i/n_i) per drawn case and side, then the mean."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(cases), size=(n_resamples, len(cases)))
    n_a, n_b = cases.n_a[idx], cases.n_b[idx]
    a = rng.binomial(n_a, cases.k_a[idx] / n_a) / n_a
    b = rng.binomial(n_b, cases.k_b[idx] / n_b) / n_b
    return (b - a).mean(axis=1)


def test_grouped_draws_have_the_two_level_law() -> None:
    cases = _cases(400, seed=11)
    grouped = bootstrap_distribution(cases, seed=5, n_resamples=20_000)
    textbook = _per_case(cases, seed=6, n_resamples=20_000)
    # Same law: a two-sample KS test does not tell them apart (fixed seeds: deterministic).
    assert ks_2samp(grouped, textbook).pvalue > 0.05
    # ... and the exact moments: E T* = observed mean change d̄,
    # Var T* = [Σ_c (d_c − d̄)²/C + Σ_c (p_b(1−p_b)/n_b + p_a(1−p_a)/n_a)/C] / C.
    p_a, p_b = cases.k_a / cases.n_a, cases.k_b / cases.n_b
    d = p_b - p_a
    within = p_b * (1 - p_b) / cases.n_b + p_a * (1 - p_a) / cases.n_a
    var = float(np.mean((d - d.mean()) ** 2) + np.mean(within)) / 400
    se_mean = np.sqrt(var / 20_000)
    assert abs(grouped.mean() - d.mean()) < 4 * se_mean
    # sample variance of 20,000 near-normal draws: relative SE √(2/B) = 1%
    assert grouped.var(ddof=1) == pytest.approx(var, rel=0.05)
    for q in (0.025, 0.5, 0.975):
        assert np.quantile(grouped, q) == pytest.approx(np.quantile(textbook, q),
                                                        abs=0.1 * np.sqrt(var))


def test_deterministic_app_interval_is_over_cases() -> None:
    """Issue 22: temperature-0 replies, 10 cases, 6 flipped to pass: main printed
    +0.60 [0.60, 0.60] (attempts resampled within each case only). The interval is the
    case-level paired bootstrap interval of the per-case differences: not degenerate."""
    k_a = np.array([0] * 6 + [1, 1, 0, 0])
    k_b = np.array([1] * 6 + [1, 1, 0, 0])
    one = np.ones(10, dtype=np.int64)
    cases = CaseArrays(one, k_a, one, k_b)
    ci = bootstrap_pass_rate_ci(cases, seed=7)
    assert ci is not None
    assert ci.lo < 0.6 < ci.hi  # main: lo == hi == 0.6
    paired = case_bootstrap_ci(k_b - k_a, seed=7)
    assert paired is not None
    assert (ci.lo, ci.hi) == (paired.lo, paired.hi)
    # the case-level paired interval, by brute-force index resampling (another stream):
    # equal up to one lattice step (1/10) of the resampled mean
    rng = np.random.default_rng(0)
    d = (k_b - k_a).astype(float)
    brute = d[rng.integers(0, 10, size=(20_000, 10))].mean(axis=1)
    lo, hi = np.quantile(brute, [0.025, 0.975])
    assert abs(ci.lo - lo) <= 0.1 + 1e-9
    assert abs(ci.hi - hi) <= 0.1 + 1e-9


def test_one_binomial_per_group_and_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = _cases(5_000, seed=2)
    drawn: list[int] = []
    real = np.random.default_rng

    class Counting:
        def __init__(self, seed: int) -> None:
            self.rng = real(seed)

        def binomial(self, n: Any, p: Any, size: Any = None) -> np.ndarray:
            out = np.asarray(self.rng.binomial(n, p, size))
            drawn.append(out.size)
            return out

        def multinomial(self, n: Any, p: Any, size: Any = None) -> np.ndarray:
            return np.asarray(self.rng.multinomial(n, p, size))

    monkeypatch.setattr(np.random, "default_rng", Counting)
    bootstrap_pass_rate_ci(cases, seed=1, n_resamples=500)
    # per case it would be 2 × 500 × 5,000 draws; here one per (count type, live side)
    types = {t for t in zip(cases.n_a.tolist(), cases.k_a.tolist(), cases.n_b.tolist(),
                            cases.k_b.tolist(), strict=True)}
    live = sum(int(0 < ka < na) + int(0 < kb < nb) for na, ka, nb, kb in types)
    assert sum(drawn) == 500 * live < 500 * 5_000 / 10


def test_deterministic_for_a_seed() -> None:
    cases = _cases(300, seed=3)
    one = bootstrap_distribution(cases, seed=42, n_resamples=1_000)
    assert np.array_equal(one, bootstrap_distribution(cases, seed=42, n_resamples=1_000))
    assert not np.array_equal(one, bootstrap_distribution(cases, seed=43, n_resamples=1_000))
    listed = [CaseCounts(int(a), int(b), int(c), int(d)) for a, b, c, d in
              zip(cases.n_a, cases.k_a, cases.n_b, cases.k_b, strict=True)]
    assert bootstrap_pass_rate_ci(listed, seed=42) == bootstrap_pass_rate_ci(cases, seed=42)


def test_one_case_without_attempt_noise_gives_a_point_interval() -> None:
    # one case, both sides constant: every resample is that case
    ci = bootstrap_pass_rate_ci([CaseCounts(3, 3, 2, 0)], seed=0, n_resamples=100)
    assert ci is not None
    assert ci.lo == ci.hi == -1.0
    assert bootstrap_pass_rate_ci([], seed=0) is None


def test_invalid_counts_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="0 <= k <= n"):
        bootstrap_pass_rate_ci([CaseCounts(2, 3, 2, 1)], seed=0)
    with pytest.raises(UsageError, match="n_resamples"):
        bootstrap_pass_rate_ci([CaseCounts(2, 1, 2, 1)], seed=0, n_resamples=0)
