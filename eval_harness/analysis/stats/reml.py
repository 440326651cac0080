"""Random-intercept model fitted by REML, for unbalanced data (method `lmm`).

Model: y = Xβ + Z u + e, u ~ N(0, σ²_c I), e ~ N(0, σ² I), X the full-factorial
sum-to-zero (R `contr.sum`) design of `y ~ A*B*...`, Z the case indicators.
Per case i (n_i rows), with λ = σ²_c/σ² and w_i = λ/(1 + λ n_i):

    V_i⁻¹ = σ⁻² (I − w_i J),  log|V_i| = n_i log σ² + log(1 + λ n_i)

so every quantity needs only per-case sums (s_xi = X_iᵀ1, s_yi = y_iᵀ1). The REML
deviance profiled over σ² is minimised over λ ≥ 0 (grid, then bounded Brent):

    d(λ) = Σ log(1 + λ n_i) + log|XᵀWX| + (N − p)(1 + log(2π RSS_λ / (N − p)))

Per-term tests are Wald F on the term's columns, F = β_Tᵀ Cov_TT⁻¹ β_T / q, with
Satterthwaite denominator df as lmerTest (Kuznetsova, Brockhoff & Christensen 2017,
J. Stat. Softw. 82(13)): for each eigen-contrast m of Cov_TT, ν_m = 2 d_m² / (g_mᵀ A g_m),
g_m the gradient of its variance in φ = (θ, σ), θ = σ_c/σ, A = 2 H⁺ (H the analytic
Hessian of the REML deviance, `reml_hessian`); then df = 2E/(E − q) with E = Σ ν_m/(ν_m − 2). On the boundary
(σ²_c = 0) the model is OLS and df = N − p, matching the balanced closed form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class RemlFit:
    """Fitted random-intercept model."""

    beta: np.ndarray
    cov_beta: np.ndarray
    sigma2: float
    sigma2_case: float
    boundary: bool
    n_obs: int
    n_params: int
    grad_cov: tuple[np.ndarray, ...] | None  # dCov/dθ, dCov/dσ (θ = σ_c/σ, as lmerTest)
    acov_phi: np.ndarray | None  # asymptotic covariance of (θ, σ)


class _Sums:
    """Per-case sufficient statistics."""

    def __init__(self, x: np.ndarray, y: np.ndarray, case_codes: np.ndarray) -> None:
        n_case = int(case_codes.max()) + 1
        self.xtx = x.T @ x
        self.xty = x.T @ y
        self.yty = float(y @ y)
        self.n_i = np.bincount(case_codes, minlength=n_case).astype(float)
        self.sx = np.zeros((n_case, x.shape[1]))
        np.add.at(self.sx, case_codes, x)
        self.sy = np.bincount(case_codes, weights=y, minlength=n_case)
        self.n_obs, self.p = x.shape

    def gls(self, lam: float) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(XᵀWX, β, RSS_λ, log|XᵀWX|) for the ratio λ."""
        w = lam / (1.0 + lam * self.n_i)
        xwx = self.xtx - (self.sx * w[:, None]).T @ self.sx
        xwy = self.xty - self.sx.T @ (w * self.sy)
        ywy = self.yty - float(w @ self.sy**2)
        beta = np.linalg.solve(xwx, xwy)
        rss = ywy - float(beta @ xwy)
        return xwx, beta, max(rss, 0.0), float(np.linalg.slogdet(xwx)[1])

    def profiled_deviance(self, lam: float) -> float:
        _, _, rss, logdet = self.gls(lam)
        dof = self.n_obs - self.p
        if rss <= 0.0:
            return -np.inf
        return float(
            np.log1p(lam * self.n_i).sum() + logdet + dof * (1.0 + np.log(2 * np.pi * rss / dof))
        )

    def deviance(self, phi: np.ndarray) -> float:
        """REML deviance (−2 log L_R up to a constant) at φ = (σ²_c, σ²)."""
        s2c, s2 = float(phi[0]), float(phi[1])
        lam = s2c / s2
        _, _, rss, logdet = self.gls(lam)
        return float(
            (self.n_obs - self.p) * np.log(s2) + np.log1p(lam * self.n_i).sum() + logdet + rss / s2
        )


def _argmin_ratio(sums: _Sums) -> float:
    """λ̂ ≥ 0 minimising the profiled REML deviance."""
    from scipy import optimize  # ~25 MiB (with scipy.linalg, .sparse): only when a model is fitted

    grid = np.concatenate([[0.0], np.logspace(-6, 6, 61)])
    devs = np.array([sums.profiled_deviance(g) for g in grid])
    best = int(np.argmin(devs))
    lo = grid[max(best - 1, 0)]
    hi = grid[min(best + 1, len(grid) - 1)]
    if best == 0 or hi == lo:
        lo, hi = 0.0, grid[1]
    res = optimize.minimize_scalar(
        lambda t: sums.profiled_deviance(t * t),
        bounds=(np.sqrt(lo), np.sqrt(hi)),
        method="bounded",
        options={"xatol": 1e-13, "maxiter": 500},
    )
    lam = float(res.x) ** 2
    if sums.profiled_deviance(0.0) <= sums.profiled_deviance(lam):
        return 0.0
    return lam


def fit_random_intercept(x: np.ndarray, y: np.ndarray, case_codes: np.ndarray) -> RemlFit:
    """REML fit of y = Xβ + case intercept + error (X must have full column rank)."""
    sums = _Sums(x, y, case_codes)
    lam = _argmin_ratio(sums)
    xwx, beta, rss, _ = sums.gls(lam)
    dof = sums.n_obs - sums.p
    sigma2 = rss / dof
    xwx_inv = np.linalg.inv(xwx)
    cov = sigma2 * xwx_inv
    if lam == 0.0 or sigma2 <= 0.0:
        return RemlFit(beta, cov, sigma2, 0.0, True, sums.n_obs, sums.p, None, None)
    s2c = lam * sigma2
    # Satterthwaite ingredients in lmerTest's parametrisation φ = (θ, σ), θ = √λ: the
    # analytic Hessian and Jacobian of the random-slopes code with q = 1
    from eval_harness.analysis.stats.mixed import CaseSums, Structure
    from eval_harness.analysis.stats.mixed_fit import fit_at

    st = Structure((0,), (1,))
    mixed = fit_at(CaseSums.from_rows(x, y, case_codes), st, np.array([np.sqrt(lam)]), 0.0)
    grads, acov = mixed.grad_cov, mixed.acov_phi
    return RemlFit(beta, cov, sigma2, s2c, False, sums.n_obs, sums.p, grads, acov)


class WaldFit(Protocol):
    """What the Wald F and Satterthwaite df need from a fit (RemlFit, mixed.MixedFit)."""

    @property
    def beta(self) -> np.ndarray: ...
    @property
    def cov_beta(self) -> np.ndarray: ...
    @property
    def grad_cov(self) -> tuple[np.ndarray, ...] | None: ...
    @property
    def acov_phi(self) -> np.ndarray | None: ...
    @property
    def n_obs(self) -> int: ...
    @property
    def n_params(self) -> int: ...


def satterthwaite_nu(fit: WaldFit, contrast: np.ndarray) -> float:
    """Satterthwaite df of one contrast lᵀβ."""
    var = float(contrast @ fit.cov_beta @ contrast)
    if fit.grad_cov is None or fit.acov_phi is None:
        return float(fit.n_obs - fit.n_params)
    g = np.array([float(contrast @ d @ contrast) for d in fit.grad_cov])
    return 2.0 * var**2 / float(g @ fit.acov_phi @ g)


def wald_term(fit: WaldFit, hyp: np.ndarray) -> tuple[float, float]:
    """(F, denominator df) for the hypothesis L β = 0 (L = `hyp`, full row rank q).

    F and the df are computed on the eigen-contrasts Pᵀ L of L Cov Lᵀ = P D Pᵀ; the F is
    invariant to the basis of L, the Satterthwaite df is not, so callers pass lmerTest's
    type-3 basis (see `model_terms.type3_hypothesis`).
    """
    q = hyp.shape[0]
    d, vecs = np.linalg.eigh(hyp @ fit.cov_beta @ hyp.T)
    ptl = vecs.T @ hyp
    f_val = float(((ptl @ fit.beta) ** 2 / d).sum()) / q
    nu = np.array([satterthwaite_nu(fit, ptl[m]) for m in range(q)])
    if q == 1:
        return f_val, float(nu[0])
    if np.all(np.abs(np.diff(nu)) < 1e-8):
        return f_val, float(nu.mean())
    if np.any(nu <= 2):
        return f_val, 2.0
    e = float((nu / (nu - 2)).sum())
    return f_val, 2 * e / (e - q)
