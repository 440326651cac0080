"""Seeded Monte Carlo checks of the rm (GG) test: size, Holm family-wise error, power.

Data: 3 × 2 within-case design, n = 20 cases, multivariate normal per case with a
case intercept, case × A random slopes of unequal variance (non-spherical), and
heteroscedastic noise. 4,000 experiments are analysed at once through the vectorised
closed form (`balanced_pvalues`), the same code path as `anova_balanced`.
Monte Carlo standard error of a 5% rate over 4,000 runs: √(.05·.95/4000) ≈ 0.0034.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from eval_harness.analysis.stats import adjust_pvalues, balanced_pvalues
from eval_harness.analysis.stats.design import orthonormal_basis

N_SIM, N_CASES, SHAPE = 4000, 20, (3, 2)
A_SLOPE_SD = np.array([0.3, 0.8, 1.5])  # cases react differently to each level of A
NOISE_SD = np.array([[0.6, 0.9], [0.7, 1.1], [0.8, 1.3]])


def cell_covariance() -> np.ndarray:
    """Σ over the 6 cells (A-major): intercept + A-slopes + noise."""
    a_of_cell = np.repeat(np.arange(3), 2)
    same_a = (a_of_cell[:, None] == a_of_cell[None, :]).astype(float)
    slopes = same_a * np.outer(A_SLOPE_SD[a_of_cell], A_SLOPE_SD[a_of_cell])
    return 1.0 + slopes + np.diag(NOISE_SD.ravel() ** 2)


def simulate(seed: int, mean: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(seed)
    chol = np.linalg.cholesky(cell_covariance())
    z = rng.standard_normal((N_SIM, N_CASES, 6))
    return (mean.ravel() + z @ chol.T).reshape(N_SIM, N_CASES, *SHAPE)


def test_size_under_no_effect_with_random_slopes() -> None:
    y = simulate(20260730, np.zeros(SHAPE))
    p = balanced_pvalues(y, 2, "rm")
    rates = {term: float(np.mean(v < 0.05)) for term, v in p.items()}
    for term, rate in rates.items():
        assert 0.035 <= rate <= 0.065, (term, rate)
    # Holm over the 3 terms keeps the family-wise error at 5% (+ 3 MC standard errors)
    fam = np.stack([p[t] for t in sorted(p)], axis=1)
    holm = np.array([adjust_pvalues(row, "holm") for row in fam])
    fwer = float(np.mean((holm < 0.05).any(axis=1)))
    assert fwer <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / N_SIM)
    # the pooled-error random-intercept model is anti-conservative for A here (why rm is the default)
    p_lmm = balanced_pvalues(y, 2, "lmm")
    assert float(np.mean(p_lmm[(0,)] < 0.05)) > 0.08


def test_power_of_planted_effect_matches_noncentral_f() -> None:
    delta = 0.45  # B level 2 is higher by delta in every A level
    mean = np.array([[0.0, delta]] * 3)
    y = simulate(777, mean)
    power_sim = float(np.mean(balanced_pvalues(y, 2, "rm")[(1,)] < 0.05))
    # theory: the B contrast of each case is normal, so F ~ noncentral F(1, n-1, λ),
    # λ = n · (cᵀμ)² / (cᵀΣc), c = (1/√3 averaging over A) ⊗ (B contrast)
    c = np.kron(orthonormal_basis(3)[:, 0], orthonormal_basis(2)[:, 1])
    lam = N_CASES * float(c @ mean.ravel()) ** 2 / float(c @ cell_covariance() @ c)
    crit = stats.f.ppf(0.95, 1, N_CASES - 1)
    power_theory = float(stats.ncf.sf(crit, 1, N_CASES - 1, lam))
    se = np.sqrt(power_theory * (1 - power_theory) / N_SIM)
    assert 0.5 < power_theory < 0.9  # a design where power is informative (≈ 0.70)
    assert abs(power_sim - power_theory) <= 3.5 * se, (power_sim, power_theory)
