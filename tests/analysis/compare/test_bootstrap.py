"""Within-case bootstrap drawn per (n, k) group: the same law as one draw per case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import ks_2samp

from eval_harness.analysis.compare.bootstrap import (
    bootstrap_distribution,
    bootstrap_pass_rate_ci,
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
    """The textbook draw: one Binomial(n_i, k_i/n_i) per case and side, then the mean."""
    rng = np.random.default_rng(seed)
    p_a, p_b = cases.k_a / cases.n_a, cases.k_b / cases.n_b
    a = rng.binomial(cases.n_a, p_a, size=(n_resamples, len(cases))) / cases.n_a
    b = rng.binomial(cases.n_b, p_b, size=(n_resamples, len(cases))) / cases.n_b
    return (b - a).mean(axis=1)


def test_grouped_draws_have_the_per_case_law() -> None:
    cases = _cases(400, seed=11)
    grouped = bootstrap_distribution(cases, seed=5, n_resamples=20_000)
    textbook = _per_case(cases, seed=6, n_resamples=20_000)
    # Same law: a two-sample KS test does not tell them apart (fixed seeds: deterministic).
    assert ks_2samp(grouped, textbook).pvalue > 0.05
    # ... and the exact moments: E T* = observed mean change,
    # Var T* = Σ_i [p_b(1-p_b)/n_b + p_a(1-p_a)/n_a] / C².
    p_a, p_b = cases.k_a / cases.n_a, cases.k_b / cases.n_b
    mean = float(np.mean(p_b - p_a))
    var = float(np.sum(p_b * (1 - p_b) / cases.n_b + p_a * (1 - p_a) / cases.n_a)) / 400**2
    se_mean = np.sqrt(var / 20_000)
    assert abs(grouped.mean() - mean) < 4 * se_mean
    # sample variance of 20,000 near-normal draws: relative SE √(2/B) = 1%
    assert grouped.var(ddof=1) == pytest.approx(var, rel=0.05)
    for q in (0.025, 0.5, 0.975):
        assert np.quantile(grouped, q) == pytest.approx(np.quantile(textbook, q),
                                                        abs=0.1 * np.sqrt(var))


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

    monkeypatch.setattr(np.random, "default_rng", Counting)
    bootstrap_pass_rate_ci(cases, seed=1, n_resamples=500)
    live_a = {(n, k) for n, k in zip(cases.n_a.tolist(), cases.k_a.tolist(), strict=True)
              if 0 < k < n}
    live_b = {(n, k) for n, k in zip(cases.n_b.tolist(), cases.k_b.tolist(), strict=True)
              if 0 < k < n}
    # per case it would be 2 × 500 × 5,000 draws
    assert sum(drawn) == 500 * (len(live_a) + len(live_b)) < 500 * 40


def test_deterministic_for_a_seed() -> None:
    cases = _cases(300, seed=3)
    one = bootstrap_distribution(cases, seed=42, n_resamples=1_000)
    assert np.array_equal(one, bootstrap_distribution(cases, seed=42, n_resamples=1_000))
    assert not np.array_equal(one, bootstrap_distribution(cases, seed=43, n_resamples=1_000))
    listed = [CaseCounts(int(a), int(b), int(c), int(d)) for a, b, c, d in
              zip(cases.n_a, cases.k_a, cases.n_b, cases.k_b, strict=True)]
    assert bootstrap_pass_rate_ci(listed, seed=42) == bootstrap_pass_rate_ci(cases, seed=42)


def test_constant_cases_give_a_point_interval() -> None:
    # every side all-pass or all-fail: nothing to resample, T* is the observed change
    cases = [CaseCounts(3, 3, 2, 0), CaseCounts(1, 0, 4, 4), CaseCounts(2, 2, 2, 2)]
    ci = bootstrap_pass_rate_ci(cases, seed=0, n_resamples=100)
    assert ci is not None
    assert ci.lo == ci.hi == pytest.approx((-1.0 + 1.0 + 0.0) / 3)
    assert bootstrap_pass_rate_ci([], seed=0) is None


def test_invalid_counts_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="0 <= k <= n"):
        bootstrap_pass_rate_ci([CaseCounts(2, 3, 2, 1)], seed=0)
    with pytest.raises(UsageError, match="n_resamples"):
        bootstrap_pass_rate_ci([CaseCounts(2, 1, 2, 1)], seed=0, n_resamples=0)
