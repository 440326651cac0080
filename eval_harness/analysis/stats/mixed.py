"""Linear mixed model with by-case random slopes, fitted by REML as lme4 does.

Model (one row per observed case × cell mean):

    y_i = X_i β + Z_i b_i + e_i,   b_i ~ N(0, σ² Λ Λᵀ),   e_i ~ N(0, σ² I)

X is the full-factorial sum-to-zero design (R `contr.sum`) of `y ~ A*B*...`; Z_i holds the
columns of X_i selected as random effects (intercept and the slopes of some terms); Λ is
the q × q relative covariance factor, lower triangular (correlated effects) or diagonal
(`||`), parametrised by θ exactly as lme4 (lower triangle, column-major).

Profiled REML deviance (Bates et al. 2015, J. Stat. Softw. 67(1), eq. 41), with per-case
M_i = Λᵀ Z_iᵀ Z_i Λ + I and W_i = I − Z_i Λ M_i⁻¹ Λᵀ Z_iᵀ (Woodbury):

    d(θ) = Σ_i log|M_i| + log|XᵀWX| + (N − p) (1 + log(2π r²(θ) / (N − p)))
    β̂ = (XᵀWX)⁻¹ XᵀWy,  r² = yᵀWy − β̂ᵀ XᵀWy,  σ̂² = r² / (N − p)

minimised over θ with the diagonal of Λ bounded below by 0 (L-BFGS-B, restarted from its
own optimum until the deviance stops improving). Everything is computed from per-case
sums XᵢᵀXᵢ, Xᵢᵀyᵢ, yᵢᵀyᵢ, so the cost is linear in the number of cases.

Satterthwaite df as lmerTest (Kuznetsova, Brockhoff & Christensen 2017, J. Stat. Softw.
82(13)): the variance parameters are φ = (θ, σ); A = 2 H⁺ where H is the numerical
Hessian (Richardson-extrapolated central differences) of the REML deviance at φ̂,

    D(φ) = Σ log|M_i| + log|XᵀWX| + r²(θ)/σ² + (N − p) log(2πσ²)

inverted over its eigenvalues > 1e-8 (Moore–Penrose, as lmerTest); the Jacobian of
Cov(β̂) = σ² (XᵀWX)⁻¹ with respect to φ is numerical in θ and analytic in σ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from eval_harness.analysis.stats.reml import pinv_positive

SINGULAR_TOL = 1e-4  # lme4::isSingular: a θ with lower bound 0 below this is at the boundary


@dataclass(frozen=True)
class CaseSums:
    """Per-case sufficient statistics of (X, y)."""

    xtx: np.ndarray  # (n, p, p)
    xty: np.ndarray  # (n, p)
    yty: np.ndarray  # (n,)
    n_obs: int
    n_cases: int

    @classmethod
    def from_rows(cls, x: np.ndarray, y: np.ndarray, case_codes: np.ndarray) -> CaseSums:
        n = int(case_codes.max()) + 1
        p = x.shape[1]
        xtx = np.zeros((n, p, p))
        np.add.at(xtx, case_codes, x[:, :, None] * x[:, None, :])
        xty = np.zeros((n, p))
        np.add.at(xty, case_codes, x * y[:, None])
        yty = np.bincount(case_codes, weights=y * y, minlength=n)
        return cls(xtx, xty, yty, len(y), n)


@lru_cache(maxsize=64)
def _tril_colmajor(q: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.tril_indices(q)
    order = np.lexsort((rows, cols))
    return rows[order], cols[order]


@dataclass(frozen=True)
class Structure:
    """Random-effects structure: intercept + slopes of `cols` (X columns), correlated or not."""

    cols: tuple[int, ...]  # X columns of the random effects, intercept (0) first
    correlated: bool

    @property
    def q(self) -> int:
        return len(self.cols)

    def n_theta(self) -> int:
        return self.q * (self.q + 1) // 2 if self.correlated else self.q

    def lower_bounds(self) -> np.ndarray:
        """0 for the diagonal of Λ, −∞ off it (lme4's `lower`)."""
        if not self.correlated:
            return np.zeros(self.q)
        return np.array([0.0 if i == j else -np.inf for j in range(self.q) for i in range(j, self.q)])

    def factor(self, theta: np.ndarray) -> np.ndarray:
        """Λ from θ (lower triangle, column-major, as lme4)."""
        if not self.correlated:
            return np.diag(theta)
        lam = np.zeros((self.q, self.q))
        rows, cols = _tril_colmajor(self.q)
        lam[rows, cols] = theta
        return lam

    def start(self) -> np.ndarray:
        return np.where(np.isfinite(self.lower_bounds()), 1.0, 0.0)


@dataclass(frozen=True)
class _Eval:
    logdet_m: float
    xwx: np.ndarray
    xwy: np.ndarray
    ywy: float


def _evaluate(s: CaseSums, st: Structure, theta: np.ndarray) -> _Eval:
    r = list(st.cols)
    lam = st.factor(theta)
    ztz = s.xtx[:, r][:, :, r]
    ztx = s.xtx[:, r, :]
    zty = s.xty[:, r]
    lzx = np.einsum("ab,nbc->nac", lam.T, ztx)  # Λᵀ Z_iᵀ X_i
    lzy = zty @ lam  # rows: (Λᵀ Z_iᵀ y_i)ᵀ
    m = np.einsum("ab,nbc,cd->nad", lam.T, ztz, lam) + np.eye(st.q)
    chol = np.linalg.cholesky(m)
    logdet = 2.0 * float(np.log(np.diagonal(chol, axis1=1, axis2=2)).sum())
    rhs = np.concatenate([lzx, lzy[:, :, None]], axis=2)
    sol = np.linalg.solve(m, rhs)
    xwx = s.xtx.sum(axis=0) - np.einsum("nap,naq->pq", lzx, sol[:, :, :-1])
    xwy = s.xty.sum(axis=0) - np.einsum("nap,na->p", lzx, sol[:, :, -1])
    ywy = float(s.yty.sum() - np.einsum("na,na->", lzy, sol[:, :, -1]))
    return _Eval(logdet, (xwx + xwx.T) / 2.0, xwy, ywy)


def _beta_rss(e: _Eval) -> tuple[np.ndarray, float, float]:
    chol = np.linalg.cholesky(e.xwx)
    beta = np.linalg.solve(e.xwx, e.xwy)
    rss = e.ywy - float(beta @ e.xwy)
    return beta, max(rss, 0.0), 2.0 * float(np.log(np.diag(chol)).sum())


def profiled_deviance(s: CaseSums, st: Structure, theta: np.ndarray) -> float:
    """REML criterion d(θ) as `lme4::lmer(..., REML = TRUE)` reports it (`deviance(fit,
    REML = TRUE)`)."""
    try:
        e = _evaluate(s, st, theta)
        _, rss, logdet_x = _beta_rss(e)
    except np.linalg.LinAlgError:
        return np.inf
    dof = s.n_obs - e.xwx.shape[0]
    if rss <= 0.0:
        return -np.inf
    return e.logdet_m + logdet_x + dof * (1.0 + np.log(2.0 * np.pi * rss / dof))


def deviance_and_gradient(s: CaseSums, st: Structure, theta: np.ndarray) -> tuple[float, np.ndarray]:
    """d(θ) and its gradient. With V_i = I + Z_i Λ Λᵀ Z_iᵀ, W = V⁻¹, C = (XᵀWX)⁻¹ and
    u_i = Z_iᵀ W_i (y_i − X_i β̂):

        ∂d/∂θ_k = tr(S G_k),  G_k = ∂(ΛΛᵀ)/∂θ_k,  S = Σ_i [Z_iᵀW_iZ_i − B_i C B_iᵀ]
                  − (N − p)/r² Σ_i u_i u_iᵀ,  B_i = Z_iᵀ W_i X_i

    (∂ log|V| = tr(W ∂V), ∂ log|XᵀWX| = −tr(C XᵀW ∂V W X), ∂r² = −yᵀP ∂V P y), and
    tr(S G_k) = 2 (S Λ)_{rc} for θ_k = Λ_{rc}.
    """
    r = list(st.cols)
    lam = st.factor(theta)
    p = s.xtx.shape[1]
    ztx = s.xtx[:, r, :]
    ztz = ztx[:, :, r]
    zty = s.xty[:, r]
    m = np.einsum("ab,nbc,cd->nad", lam.T, ztz, lam) + np.eye(st.q)
    try:
        chol = np.linalg.cholesky(m)
        rhs = np.concatenate([np.einsum("ab,nbc->nac", lam.T, ztx),
                              (zty @ lam)[:, :, None]], axis=2)
        sol = np.linalg.solve(m, rhs)  # M⁻¹ Λᵀ [ZᵀX, Zᵀy]
        k = ztz @ lam  # Z_iᵀZ_i Λ
        b = ztx - k @ sol[:, :, :p]  # Z_iᵀ W_i X_i
        c = zty - np.einsum("nab,nb->na", k, sol[:, :, p])  # Z_iᵀ W_i y_i
        a = ztz - k @ sol[:, :, r]  # Z_iᵀ W_i Z_i
        xwx = s.xtx.sum(axis=0) - np.einsum("nap,naq->pq", rhs[:, :, :p], sol[:, :, :p])
        xwy = s.xty.sum(axis=0) - np.einsum("nap,na->p", rhs[:, :, :p], sol[:, :, p])
        ywy = float(s.yty.sum() - np.einsum("na,na->", rhs[:, :, p], sol[:, :, p]))
        xwx = (xwx + xwx.T) / 2.0
        cx = np.linalg.cholesky(xwx)
        cinv = np.linalg.inv(xwx)
    except np.linalg.LinAlgError:
        return np.inf, np.zeros_like(theta)
    beta = cinv @ xwy
    rss = ywy - float(beta @ xwy)
    dof = s.n_obs - p
    if rss <= 0.0:
        return -np.inf, np.zeros_like(theta)
    dev = (2.0 * float(np.log(np.diagonal(chol, axis1=1, axis2=2)).sum())
           + 2.0 * float(np.log(np.diag(cx)).sum()) + dof * (1.0 + np.log(2.0 * np.pi * rss / dof)))
    u = c - b @ beta
    smat = (a.sum(axis=0) - np.einsum("nap,pq,nbq->ab", b, cinv, b)
            - dof / rss * np.einsum("na,nb->ab", u, u))
    sl = 2.0 * smat @ lam
    if not st.correlated:
        return dev, np.diag(sl).copy()
    rows, cols = _tril_colmajor(st.q)
    return dev, sl[rows, cols]


def _vp_deviance(s: CaseSums, st: Structure, varpar: np.ndarray) -> float:
    """D(θ, σ): the REML deviance at a given σ (lmerTest's `devfun_vp`)."""
    theta, sigma = varpar[:-1], float(varpar[-1])
    e = _evaluate(s, st, theta)
    _, rss, logdet_x = _beta_rss(e)
    dof = s.n_obs - e.xwx.shape[0]
    return e.logdet_m + logdet_x + rss / sigma**2 + dof * np.log(2.0 * np.pi * sigma**2)


def _covbeta(s: CaseSums, st: Structure, theta: np.ndarray) -> np.ndarray:
    """(XᵀWX)⁻¹ at θ (Cov(β̂) / σ²)."""
    return np.linalg.inv(_evaluate(s, st, theta).xwx)


def _steps(x: np.ndarray) -> np.ndarray:
    # numDeriv's genD: d = 0.1 relative, eps = 1e-4 where |x| < zero.tol
    zero_tol = np.sqrt(np.finfo(float).eps / 7e-7)
    return np.where(np.abs(x) < zero_tol, 1e-4, 0.1 * np.abs(x))


def hessian(f: Callable[[np.ndarray], float], x: np.ndarray, r: int = 4) -> np.ndarray:
    """Second derivatives by central differences with r Richardson steps (numDeriv-style)."""
    k = x.size
    f0 = f(x)
    h0 = _steps(x)
    levels = []
    for level in range(r):
        h = h0 / 2.0**level
        hm = np.zeros((k, k))
        diag = np.zeros(k)
        for i in range(k):
            ei = np.zeros(k)
            ei[i] = h[i]
            diag[i] = (f(x + ei) - 2.0 * f0 + f(x - ei)) / h[i] ** 2
        for i in range(k):
            hm[i, i] = diag[i]
            for j in range(i):
                eij = np.zeros(k)
                eij[i], eij[j] = h[i], h[j]
                val = (f(x + eij) - 2.0 * f0 + f(x - eij) - diag[i] * h[i] ** 2
                       - diag[j] * h[j] ** 2) / (2.0 * h[i] * h[j])
                hm[i, j] = hm[j, i] = val
        levels.append(hm)
    for m in range(1, r):
        levels = [(levels[t + 1] * 4.0**m - levels[t]) / (4.0**m - 1.0) for t in range(len(levels) - 1)]
    return levels[0]


def jacobian(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, r: int = 4) -> list[np.ndarray]:
    """∂f/∂x_j (one array per j) by central differences with Richardson extrapolation."""
    h0 = _steps(x)
    out = []
    for j in range(x.size):
        levels = []
        for level in range(r):
            e = np.zeros(x.size)
            e[j] = h0[j] / 2.0**level
            levels.append((f(x + e) - f(x - e)) / (2.0 * e[j]))
        for m in range(1, r):
            levels = [(levels[t + 1] * 4.0**m - levels[t]) / (4.0**m - 1.0) for t in range(len(levels) - 1)]
        out.append(levels[0])
    return out


@dataclass(frozen=True)
class MixedFit:
    """A REML fit; attribute names shared with `reml.RemlFit` so `reml.wald_term` applies."""

    structure: Structure
    theta: np.ndarray
    beta: np.ndarray
    cov_beta: np.ndarray
    sigma2: float
    deviance: float
    n_obs: int
    n_params: int
    grad_cov: tuple[np.ndarray, ...] | None  # ∂Cov(β̂)/∂φ_j, φ = (θ, σ)
    acov_phi: np.ndarray | None  # 2 H⁺
    singular: bool

    def random_cov(self) -> np.ndarray:
        """Covariance of the random effects, σ² Λ Λᵀ (q × q)."""
        lam = self.structure.factor(self.theta)
        return self.sigma2 * lam @ lam.T


def canonical_theta(st: Structure, theta: np.ndarray) -> np.ndarray:
    """The θ with a non-negative diagonal giving the same Λ Λᵀ (flip column signs)."""
    if not st.correlated:
        return np.abs(theta)
    lam = st.factor(theta)
    lam = lam * np.where(np.diag(lam) < 0, -1.0, 1.0)[None, :]
    rows, cols = _tril_colmajor(st.q)
    return lam[rows, cols]


def _optimise(s: CaseSums, st: Structure) -> tuple[np.ndarray, float]:
    """Minimise d(θ). The deviance depends on Λ only through Λ Λᵀ, which is unchanged by
    flipping the sign of a column of Λ, so the search runs unconstrained (BFGS) and the
    optimum is mapped to lme4's non-negative diagonal: a bounded search tends to stick at
    a zero variance that is not the optimum."""
    from scipy import optimize  # ~25 MiB (with scipy.linalg, .sparse): only when a model is fitted

    def fun(t: np.ndarray) -> float:
        return profiled_deviance(s, st, t)

    def fun_grad(t: np.ndarray) -> tuple[float, np.ndarray]:
        return deviance_and_gradient(s, st, t)

    best_t, best_d = st.start(), fun(st.start())
    for x0 in (st.start(), 0.3 * st.start()):
        t, d = x0, fun(x0)
        for _ in range(3):  # restart from the optimum until it stops improving
            res = optimize.minimize(fun_grad, t, jac=True, method="BFGS",
                                    options={"gtol": 1e-9, "maxiter": 5000})
            improved = bool(res.fun < d - 1e-12)
            if res.fun <= d:
                t, d = np.asarray(res.x), float(res.fun)
            if not improved:
                break
        if d < best_d:
            best_t, best_d = t, d
        if not np.any(np.abs(np.diag(st.factor(best_t))) < SINGULAR_TOL):
            break  # an interior optimum: the second start only guards boundary ones
    theta = canonical_theta(st, best_t)
    lower = st.lower_bounds()
    # a variance at the boundary is exactly 0 (lme4 reports it so)
    theta = np.where(np.isfinite(lower) & (theta < 1e-7), 0.0, theta)
    return theta, fun(theta)


def fit_mixed(s: CaseSums, st: Structure, *, with_df: bool = True) -> MixedFit:
    """REML fit of one structure (X must have full column rank)."""
    theta, dev = _optimise(s, st)
    return fit_at(s, st, theta, dev, with_df=with_df)


def fit_at(s: CaseSums, st: Structure, theta: np.ndarray, dev: float, *,
           with_df: bool = True) -> MixedFit:
    """The fit at a given optimum θ̂ (β̂, σ̂², Cov(β̂), and the Satterthwaite ingredients)."""
    e = _evaluate(s, st, theta)
    beta, rss, _ = _beta_rss(e)
    p = e.xwx.shape[0]
    sigma2 = rss / (s.n_obs - p)
    xwx_inv = np.linalg.inv(e.xwx)
    lower = st.lower_bounds()
    singular = bool(np.any(np.isfinite(lower) & (theta < SINGULAR_TOL)))
    grads: tuple[np.ndarray, ...] | None = None
    acov: np.ndarray | None = None
    if with_df and sigma2 > 0:
        sigma = np.sqrt(sigma2)
        varpar = np.concatenate([theta, [sigma]])
        hess = hessian(lambda v: _vp_deviance(s, st, v), varpar)
        acov = 2.0 * pinv_positive(hess)
        jac_t = jacobian(lambda t: sigma2 * _covbeta(s, st, t), theta)
        grads = (*jac_t, 2.0 * sigma * xwx_inv)
    return MixedFit(st, theta, beta, sigma2 * xwx_inv, sigma2, dev, s.n_obs, p, grads, acov,
                    singular)


def slope_structure(term_cols: Sequence[Sequence[int]], correlated: bool) -> Structure:
    """Intercept plus the X columns of every listed slope term."""
    cols = [0] + [c for t in term_cols for c in t]
    return Structure(tuple(cols), correlated)
