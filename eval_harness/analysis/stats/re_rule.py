"""The random-effects structure rule of the mixed model (method `mixed`, and `auto` on
incomplete data). Documented in docs/statistics.md §3.3; mirrored in R by
tests/analysis/stats/r_reference/random_slopes.R.

Aim: every tested term keeps its own by-case variance (Barr, Levy, Scheepers & Tily 2013,
"keep it maximal"), the choice depends on the data only — never on the order of the
factors or of their levels — and a fit that cannot separate the variance parameters is
not reported as a test.

1. Maximal on cell means: intercept + by-case slopes of *every* term, the highest-order
   interaction included, beside the residual. On cell means the residual is not
   separately identified (σ² I lies in the span of the slopes): the likelihood has a
   one-dimensional ridge along which V, β̂, Cov(β̂), F and the df are constant
   (Satterthwaite's A = 2H⁺ drops the flat direction, Kuznetsova et al. 2017; Kenward–
   Roger's W = I⁺ the null space of the information, `kenward_roger`). What this
   buys: the classical structure without the highest-order slope forces every other term
   × case variance to be at least the residual's (a boundary fit whenever one is
   smaller, which inflated the highest-order term's error rate), and a one-factor model
   with only an intercept assumes sphericity.
2. One covariance block per term, `(1 | case) + (0 + A | case) + …`: correlated within a
   term's columns, so invariant to the coding and order of its levels (what `||` means
   for factors in lme4); never `||` on sum-coded columns. Correlations between terms are
   not modelled: the correlated full model (an unstructured cell covariance) has an
   unbounded REML criterion on cell means with missing cells (σ² → 0, d → −∞).
3. No slope is ever dropped for a zero variance or for N ≤ n_cases · q.
4. If the fitted cell covariance Σ = σ²(I + X_c ΛΛᵀX_cᵀ) is rank deficient (an eigenvalue
   < RANK_REL × its largest: rePCA's dimensionality, Bates, Kliegl, Vasishth & Baayen
   2015, arXiv:1506.04967), a term × case stratum is estimated at 0 and its term would
   have no error variance: the classical structure (the same blocks without the
   highest-order slope, its stratum being the residual) is fitted, warm-started, and the
   note reports the REML likelihood-ratio test between the two. The residual floors the
   other strata — but when the stratum estimated at 0 is the highest-order term's own
   (it is then the classical residual), that term has no error variance to be tested
   against: it is excluded with the reason (`Choice.untestable`). Measured in
   bench/bench_type1.py's ab12 (12 cases, 30 % missing): 39 of 1,958 data sets, with 1–2
   complete cases, where testing A:B against that residual rejected 74 % under the null.
5. Saturation: when N − p is below the number of identified variance parameters, or the
   fitted cell covariance is singular (smallest eigenvalue < 1e-8 · var(y)), or the
   classical σ̂² < 1e-8 · var(y), no term is tested (`Choice.saturated` says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.stats.design import term_subsets
from eval_harness.analysis.stats.mixed import CaseSums, MixedFit, block_start, slope_structure
from eval_harness.analysis.stats.mixed_fit import fit_at, fit_mixed

#: a cell covariance with eigenvalues below this fraction of its largest is rank deficient
RANK_REL = 1e-4
#: a cell covariance eigenvalue below this fraction of var(y) is a fit through the data
SATURATED_REL = 1e-8


@dataclass(frozen=True)
class Choice:
    """The chosen structure's final fit (with the Satterthwaite ingredients if asked)."""

    fit: MixedFit
    slopes: tuple[tuple[int, ...], ...]
    notes: tuple[str, ...]
    saturated: str | None  # why no term can be tested, or None
    #: terms (factor-index subsets) that cannot be tested, with the reason
    untestable: tuple[tuple[tuple[int, ...], str], ...] = ()



def _lrt(simple: MixedFit, full: MixedFit) -> tuple[float, int, float]:
    from scipy.special import chdtrc  # scipy is loaded with the optimiser already

    stat = max(simple.deviance - full.deviance, 0.0)
    df = full.structure.n_theta() - simple.structure.n_theta()
    return stat, df, float(chdtrc(df, stat))


def cell_covariance(fit: MixedFit, x_cells: np.ndarray) -> np.ndarray:
    """Σ = σ² (I + X_c ΛΛᵀ X_cᵀ) over every cell (X_c: one design row per cell)."""
    lam = fit.structure.factor(fit.theta)
    z = x_cells[:, list(fit.structure.cols)]
    return fit.sigma2 * (np.eye(len(x_cells)) + z @ lam @ lam.T @ z.T)


def ridge_point(fit: MixedFit, x_cells: np.ndarray) -> tuple[float, np.ndarray]:
    """(σ², relative covariance D) at the end of the likelihood ridge with the largest σ²:
    Σ/σ'² − I = X D' Xᵀ stays block diagonal, D' = D/s − (1 − 1/s)(XᵀX)⁻¹ (X square, its
    terms orthogonal), s = 1 + min over blocks of λ_min((XᵀX)_b D_b). There the smallest
    term × case stratum is the residual, as in the classical decomposition: the variance
    components are reported at this point."""
    st = fit.structure
    lam = st.factor(fit.theta)
    d = lam @ lam.T
    z = x_cells[:, list(st.cols)]
    if z.shape[0] != z.shape[1]:
        return fit.sigma2, d
    ztz = z.T @ z
    k = np.linalg.inv(ztz)
    shift, start = np.inf, 0
    for b in st.blocks:
        sl = slice(start, start + b)
        vals = np.linalg.eigvals(ztz[sl, sl] @ d[sl, sl]).real
        shift = min(shift, float(vals.min()))
        start += b
    s = 1.0 + max(shift, 0.0)
    return fit.sigma2 * s, d / s - (1.0 - 1.0 / s) * k


def block_strata(fit: MixedFit, x_cells: np.ndarray) -> list[np.ndarray]:
    """Eigenvalues of the fitted cell covariance Σ within each block's columns, for a
    structure whose random effects span the cells (X_c square, its terms orthogonal: Σ
    maps each term's column space to itself, Σ X_b = X_b σ²(I + (X_bᵀX_b) D_b))."""
    st = fit.structure
    lam = st.factor(fit.theta)
    d = lam @ lam.T
    z = x_cells[:, list(st.cols)]
    ztz = z.T @ z
    out, start = [], 0
    for b in st.blocks:
        sl = slice(start, start + b)
        out.append(fit.sigma2 * (1.0 + np.linalg.eigvals(ztz[sl, sl] @ d[sl, sl]).real))
        start += b
    return out


def saturation(sums: CaseSums, fit: MixedFit, var_y: float, x_cells: np.ndarray) -> str | None:
    """Why the fit cannot separate its variance parameters (rule step 5), or None."""
    full = fit.structure.q == len(x_cells)  # the slopes span the cells: σ² on a ridge
    n_var = fit.structure.n_theta() + (0 if full else 1)
    dof = sums.n_obs - fit.n_params
    if dof < n_var:
        return (f"saturated: {dof} residual df (N − p = {sums.n_obs} − {fit.n_params}) for "
                f"{n_var} variance parameters")
    low = float(np.linalg.eigvalsh(cell_covariance(fit, x_cells)).min())
    floor = fit.sigma2 if not full else low  # the classical residual floors every stratum
    if not min(low, floor) > SATURATED_REL * var_y:
        return (f"saturated: the fitted cell covariance is singular (smallest eigenvalue "
                f"{low:.3g}, var(y) = {var_y:.3g}); F would be a ratio of rounding errors")
    return None


def choose_and_fit(sums: CaseSums, cols: Mapping[tuple[int, ...], np.ndarray], k: int,
                   var_y: float, x_cells: np.ndarray, *, with_df: bool = True) -> Choice:
    """The rule of the module docstring; `var_y` is the sample variance of y, `x_cells`
    the design row of every cell; `with_df`: the final fit carries the Satterthwaite
    ingredients (the Kenward–Roger df computes its own, `kenward_roger.adjust`)."""
    slopes = term_subsets(k)
    notes: list[str] = []
    fit = fit_mixed(sums, slope_structure([list(cols[t]) for t in slopes], False),
                    with_df=False)
    vals = np.linalg.eigvalsh(cell_covariance(fit, x_cells))
    used = list(slopes)
    untestable: list[tuple[tuple[int, ...], str]] = []
    if vals.min() < RANK_REL * vals.max():
        top = block_strata(fit, x_cells)[-1]  # the highest-order term's stratum (last block)
        if top.min() < RANK_REL * vals.max():
            untestable.append((slopes[-1], (
                "its term × case stratum is estimated at 0 (a boundary of the full fit, "
                f"{top.min():.3g} against a largest stratum of {vals.max():.3g}): no error "
                "variance to test it against")))
        # a term × case stratum estimated at 0 would leave its term without an error
        # variance: the classical structure's residual floors every stratum
        dims = int((vals >= RANK_REL * vals.max()).sum())
        used = [t for t in slopes if len(t) < k]
        classical = slope_structure([list(cols[t]) for t in used], False)
        lam = fit.structure.factor(fit.theta)
        q = classical.q
        warm = block_start(classical, lam[:q, :q] @ lam[:q, :q].T)
        alt = fit_mixed(sums, classical, with_df=False, warm=warm)
        stat, df, p_lrt = _lrt(alt, fit)
        notes.append(f"the cell covariance spans {dims} of {len(vals)} dimensions (rePCA): "
                     "the highest-order term × case stratum is the residual (classical "
                     f"structure; REML LRT against the full one χ²({df}) = {stat:.3g}, "
                     f"p = {p_lrt:.3g})")
        fit = alt
    final = fit_at(sums, fit.structure, fit.theta, fit.deviance, with_df=with_df)
    return Choice(final, tuple(used), tuple(notes), saturation(sums, final, var_y, x_cells),
                  tuple(untestable))
