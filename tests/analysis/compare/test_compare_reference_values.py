"""Reference values for Wilson, Fisher, the stratified permutation test and the paired helpers.

R 4.x values are quoted beside each number (R calls in comments).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from eval_harness.analysis.compare import permutation
from eval_harness.analysis.compare.fisher import fisher_exact_two_sided
from eval_harness.analysis.compare.paired import cluster_robust_mean, holm_adjust, paired_t
from eval_harness.analysis.compare.permutation import (
    WEIGHT_RESOLUTION,
    CaseCounts,
    exact_feasible,
    integer_weights,
    seed_from_ids,
    stratified_permutation_test,
)
from eval_harness.analysis.compare.wilson import wilson_interval
from eval_harness.errors import UsageError


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (3, 3, 0.4385029682, 1.0),  # prop.test(3, 3, correct = FALSE)$conf.int
        (5, 10, 0.2365930905, 0.7634069095),  # prop.test(5, 10, correct = FALSE)$conf.int
        (0, 10, 0.0, 0.2775327999),  # prop.test(0, 10, correct = FALSE)$conf.int
        (2, 3, 0.2076596008, 0.9385080553),  # prop.test(2, 3, correct = FALSE)$conf.int
    ],
)
def test_wilson_matches_r(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson_interval(k, n)
    assert got == pytest.approx((lo, hi), abs=1e-9)


def test_wilson_rejects_bad_counts() -> None:
    with pytest.raises(UsageError):
        wilson_interval(4, 3)


@pytest.mark.parametrize(
    ("a", "an", "b", "bn", "p"),
    [
        (5, 5, 0, 5, 0.007936507937),  # fisher.test(matrix(c(5,0,0,5),2))$p.value
        (3, 3, 0, 3, 0.1),  # fisher.test(matrix(c(3,0,0,3),2))$p.value
        (10, 10, 5, 10, 0.03250773994),  # fisher.test(matrix(c(10,5,0,5),2))$p.value
        (7, 9, 13, 40, 0.0220541219),  # fisher.test(matrix(c(7,2,13,27),2))$p.value
    ],
)
def test_fisher_matches_r(a: int, an: int, b: int, bn: int, p: float) -> None:
    assert fisher_exact_two_sided(a, an, b, bn) == pytest.approx(p, rel=1e-8)
    assert fisher_exact_two_sided(b, bn, a, an) == pytest.approx(p, rel=1e-8)


def test_fisher_matches_scipy_on_random_tables() -> None:
    from scipy.stats import fisher_exact

    rng = np.random.default_rng(11)
    for _ in range(200):
        an, bn = (int(x) for x in rng.integers(1, 25, size=2))
        a, b = int(rng.integers(0, an + 1)), int(rng.integers(0, bn + 1))
        ref = fisher_exact([[a, an - a], [b, bn - b]]).pvalue
        assert fisher_exact_two_sided(a, an, b, bn) == pytest.approx(ref, rel=1e-9, abs=1e-15)


def _flips(n_flips: int) -> list[CaseCounts]:
    # One attempt per side: n one-way flips (pass -> fail) plus concordant cases.
    return (
        [CaseCounts(1, 1, 1, 0)] * n_flips
        + [CaseCounts(1, 1, 1, 1)] * 4
        + [CaseCounts(1, 0, 1, 0)] * 3
    )


@pytest.mark.parametrize(
    ("flips", "p"),
    [(6, 0.03125), (5, 0.0625)],  # binom.test(6, 6)$p.value; binom.test(5, 5)$p.value
)
def test_one_attempt_reduces_to_sign_test(flips: int, p: float) -> None:
    res = stratified_permutation_test(_flips(flips))
    assert res.method == "exact"
    assert res.p == pytest.approx(p, rel=1e-12)
    assert res.p_drop == pytest.approx(p / 2, rel=1e-12)
    assert res.statistic == pytest.approx(-flips / (flips + 7))


def _rho(n_a: int, n_b: int, m: int) -> float:
    # Independent float version of ρ = 1 / (N·sd0(X)), X hypergeometric.
    total = n_a + n_b
    return 1 / (total * math.sqrt(n_a * n_b * m * (total - m) / (total**2 * (total - 1))))


def _brute_force(cases: list[CaseCounts]) -> tuple[float, float]:
    """Enumerate every within-case re-split of the pooled attempts (labelled attempts)."""
    live = [c for c in cases if 0 < c.k_a + c.k_b < c.n_a + c.n_b]
    if not live:
        return 1.0, 1.0
    rho_min = min(_rho(c.n_a, c.n_b, c.k_a + c.k_b) for c in live)
    per_case, z_obs = [], 0
    for c in live:
        total, m = c.n_a + c.n_b, c.k_a + c.k_b
        w = round(WEIGHT_RESOLUTION * _rho(c.n_a, c.n_b, m) / rho_min)
        pooled = [1] * m + [0] * (total - m)
        per_case.append(
            [
                w * (total * sum(pooled[i] for i in idx) - m * c.n_b)
                for idx in itertools.combinations(range(total), c.n_b)
            ]
        )
        z_obs += w * (total * c.k_b - m * c.n_b)
    zs = np.array([sum(combo) for combo in itertools.product(*per_case)])
    p_two = 1.0 if z_obs == 0 else float(np.mean(np.abs(zs) >= abs(z_obs)))
    return p_two, float(np.mean(zs <= z_obs))


def test_exact_equals_brute_force_on_random_small_designs() -> None:
    rng = np.random.default_rng(2024)
    for _ in range(40):
        cases = []
        for _ in range(int(rng.integers(1, 5))):
            n_a, n_b = int(rng.integers(1, 5)), int(rng.integers(1, 5))
            cases.append(
                CaseCounts(n_a, int(rng.integers(0, n_a + 1)), n_b, int(rng.integers(0, n_b + 1)))
            )
        res = stratified_permutation_test(cases)
        p_two, p_drop = _brute_force(cases)
        assert res.method == "exact"
        assert res.p == pytest.approx(p_two, abs=1e-12)
        assert res.p_drop == pytest.approx(p_drop, abs=1e-12)


def test_weights_are_rounded_inverse_null_sd() -> None:
    margins = [(a, b, m) for a in range(1, 9) for b in range(1, 9) for m in range(1, a + b)]
    rho = {t: _rho(*t) for t in margins}
    got = integer_weights(margins)
    for t in margins:
        exact = WEIGHT_RESOLUTION * rho[t] / min(rho.values())
        assert abs(got[t] - exact) <= 0.5 + 1e-9
    # With equal attempts, tables with different margins get different weights (no ties).
    five = integer_weights([(5, 5, m) for m in range(1, 10)])
    assert len(set(five.values())) == 5 and min(five.values()) == WEIGHT_RESOLUTION
    assert five[(5, 5, 1)] == five[(5, 5, 9)]


def test_fft_path_matches_direct_convolution(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    cases = []
    for _ in range(40):
        n_a, n_b = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        cases.append(
            CaseCounts(n_a, int(rng.integers(0, n_a + 1)), n_b, int(rng.integers(0, n_b + 1)))
        )
    direct = stratified_permutation_test(cases, method="exact")
    monkeypatch.setattr(permutation, "DIRECT_LIMIT", 0)
    monkeypatch.setattr(permutation, "DIRECT_SHORT", 0)
    fft = stratified_permutation_test(cases, method="exact")
    assert 1e-6 < direct.p < 1
    assert fft.p == pytest.approx(direct.p, abs=1e-12)
    assert fft.p_drop == pytest.approx(direct.p_drop, abs=1e-12)


def test_monte_carlo_agrees_with_exact_and_reproduces() -> None:
    cases = [CaseCounts(4, 4, 3, 1), CaseCounts(3, 2, 5, 1), CaseCounts(2, 1, 2, 0)]
    exact = stratified_permutation_test(cases)
    seed = seed_from_ids("runs:abc", "runs:def")
    mc = stratified_permutation_test(cases, method="monte-carlo", seed=seed, n_permutations=20_000)
    again = stratified_permutation_test(
        cases, method="monte-carlo", seed=seed, n_permutations=20_000
    )
    assert mc.method == "monte-carlo" and mc.seed == seed and mc.n_permutations == 20_000
    assert mc.p == again.p  # same seed, same answer
    assert mc.p == pytest.approx(exact.p, abs=0.015)  # 4 SE at p ~ 0.3


def test_seed_is_sha256_of_ids() -> None:
    import hashlib

    digest = hashlib.sha256(b"a|b").digest()
    assert seed_from_ids("a", "b") == int.from_bytes(digest[:8], "big") >> 1
    assert seed_from_ids("a", "b") != seed_from_ids("b", "a")


def test_unequal_attempts_over_many_cases_fall_back_to_monte_carlo() -> None:
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(400):
        n_a, n_b = int(rng.integers(1, 14)), int(rng.integers(1, 14))
        cases.append(
            CaseCounts(n_a, int(rng.integers(0, n_a + 1)), n_b, int(rng.integers(0, n_b + 1)))
        )
    assert not exact_feasible(cases)
    res = stratified_permutation_test(cases, n_permutations=2_000, seed=7)
    assert res.method == "monte-carlo" and res.seed == 7
    assert 0.0 < res.p <= 1.0


def test_several_hundred_balanced_cases_stay_exact() -> None:
    rng = np.random.default_rng(6)
    cases = [CaseCounts(5, int(a), 5, int(b)) for a, b in rng.integers(0, 6, size=(400, 2))]
    assert exact_feasible(cases)
    res = stratified_permutation_test(cases)
    assert res.method == "exact"
    # score = Z / sd0(Z) is close to normal with 400 cases: p ~ 2·(1 − Φ(|score|)).
    assert 0.001 < res.p < 0.999
    assert res.p == pytest.approx(2 * norm.sf(abs(res.score)), abs=0.02)


def test_no_cases_and_constant_cases() -> None:
    assert stratified_permutation_test([]).method == "none"
    same = stratified_permutation_test([CaseCounts(3, 3, 3, 3), CaseCounts(2, 0, 2, 0)])
    assert same.p == 1.0 and same.statistic == 0.0


def test_paired_t_matches_r() -> None:
    d = [0.2, -0.1, 0.4, 0.3, 0.0, 0.5]
    res = paired_t(d)
    # t.test(c(0.2,-0.1,0.4,0.3,0.0,0.5))$conf.int ; $p.value
    assert res.ci == pytest.approx((-0.02644629825, 0.45977963158), abs=1e-9)
    assert res.p == pytest.approx(0.07056563535, rel=1e-8)
    assert res.df == 5


def test_cr1_matches_r_sandwich() -> None:
    d = [0.2, -0.1, 0.4, 0.3, 0.0, 0.5]
    res = cluster_robust_mean(d, [1, 1, 2, 2, 3, 3])
    assert res is not None
    # sqrt(sandwich::vcovCL(lm(d ~ 1), cluster = c(1,1,2,2,3,3), type = "HC1")[1, 1])
    assert res.se == pytest.approx(0.08819171037, rel=1e-8)
    assert res.df == 2 and res.n_clusters == 3
    assert cluster_robust_mean(d, ["x"] * 6) is None


def test_holm_matches_r() -> None:
    # p.adjust(c(0.01, 0.04, NA, 0.03, 0.2), "holm") = 0.04 0.09 NA 0.09 0.20
    got = holm_adjust([0.01, 0.04, float("nan"), 0.03, 0.2])
    assert got[0] == pytest.approx(0.04) and got[1] == pytest.approx(0.09)
    assert np.isnan(got[2])
    assert got[3] == pytest.approx(0.09) and got[4] == pytest.approx(0.2)
