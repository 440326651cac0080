"""Linear mixed model with by-case random slopes, fitted by REML as lme4 does.

Model (one row per observed case × cell mean):

    y_i = X_i β + Z_i b_i + e_i,   b_i ~ N(0, σ² Λ Λᵀ),   e_i ~ N(0, σ² I)

X is the full-factorial sum-to-zero design (R `contr.sum`) of `y ~ A*B*...`; Z_i holds the
columns of X_i selected as random effects (intercept and the slopes of some terms); Λ is
the q × q relative covariance factor, block diagonal with lower-triangular blocks (one
block: correlated effects; one per term; or 1 × 1 blocks, `||`), parametrised by θ
exactly as lme4 (each block's lower triangle, column-major).

Profiled REML deviance (Bates et al. 2015, J. Stat. Softw. 67(1), eq. 41), with per-case
M_i = Λᵀ Z_iᵀ Z_i Λ + I and W_i = I − Z_i Λ M_i⁻¹ Λᵀ Z_iᵀ (Woodbury):

    d(θ) = Σ_i log|M_i| + log|XᵀWX| + (N − p) (1 + log(2π r²(θ) / (N − p)))
    β̂ = (XᵀWX)⁻¹ XᵀWy,  r² = yᵀWy − β̂ᵀ XᵀWy,  σ̂² = r² / (N − p)

minimised over θ unconstrained (d depends on ΛΛᵀ only; the optimum is mapped to lme4's
non-negative diagonal of Λ) by Newton steps on the analytic gradient and Hessian
(`mixed_fit`). Everything is computed from per-case sums XᵢᵀXᵢ, Xᵢᵀyᵢ, yᵢᵀyᵢ, once per
group of cases with the same XᵢᵀXᵢ (`case_groups`), so the cost is linear in the number
of cases.

Satterthwaite df as lmerTest (Kuznetsova, Brockhoff & Christensen 2017, J. Stat. Softw.
82(13)): the variance parameters are φ = (θ, σ); A = 2 H⁺ where H is the Hessian of the
REML deviance D(φ) = Σ log|M_i| + log|XᵀWX| + r²(θ)/σ² + (N − p) log(2πσ²) at φ̂,
inverted over its eigenvalues > 1e-8 (Moore–Penrose, as lmerTest); H and the Jacobian of
Cov(β̂) = σ² (XᵀWX)⁻¹ are analytic (`reml_hessian`), not numerical differences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from eval_harness.analysis.stats.case_groups import (
    Blocks,
    CaseGroups,
    group_algebra,
    residuals,
    unique_rows,
)

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
        # a design has few distinct rows (one per cell): sum per (case, row) and expand,
        # instead of an (N, p, p) stack of outer products
        first, row, _ = unique_rows(x)
        rows = x[first]
        if len(rows) * n <= max(4 * len(y), 1 << 20):
            key = case_codes * len(rows) + row
            count = np.bincount(key, minlength=n * len(rows)).reshape(n, len(rows))
            ysum = np.bincount(key, weights=y, minlength=n * len(rows)).reshape(n, len(rows))
            xtx = (count.astype(float) @ (rows[:, :, None] * rows[:, None, :]).reshape(-1, p * p)
                   ).reshape(n, p, p)
            xty = ysum @ rows
        else:  # many distinct rows (covariates): per-row outer products
            xtx = np.zeros((n, p, p))
            np.add.at(xtx, case_codes, x[:, :, None] * x[:, None, :])
            xty = np.zeros((n, p))
            np.add.at(xty, case_codes, x * y[:, None])
        yty = np.bincount(case_codes, weights=y * y, minlength=n)
        return cls(xtx, xty, yty, len(y), n)

    @cached_property
    def groups(self) -> CaseGroups:
        """The cases grouped by design (the fit's algebra runs once per group)."""
        return CaseGroups.of(self.xtx, self.xty, self.yty)


@lru_cache(maxsize=64)
def _tril_colmajor(q: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.tril_indices(q)
    order = np.lexsort((rows, cols))
    return rows[order], cols[order]


@dataclass(frozen=True)
class Structure:
    """Random-effects structure: intercept + slopes of `cols` (X columns), with Λ block
    diagonal over consecutive groups of `blocks` columns, each block lower triangular.

    One block of all q columns is lme4's correlated `(1 + A + B | case)`; one block per
    term is `(1 | case) + (0 + A | case) + (0 + B | case)` (uncorrelated between terms,
    correlated within the columns of a term, so invariant to the order and coding of its
    levels); blocks of one column are `(1 + A1 + A2 || case)` on numeric columns.
    θ is lme4's: each block's lower triangle, column-major, blocks in order.
    """

    cols: tuple[int, ...]  # X columns of the random effects, intercept (0) first
    blocks: tuple[int, ...]  # sizes of the diagonal blocks of Λ (sum = q)

    @property
    def q(self) -> int:
        return len(self.cols)

    @property
    def correlated(self) -> bool:
        """One block: every pair of random effects may correlate."""
        return len(self.blocks) == 1

    def n_theta(self) -> int:
        return sum(b * (b + 1) // 2 for b in self.blocks)

    def index(self) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) of Λ that each θ_k is."""
        rows, cols, start = [], [], 0
        for b in self.blocks:
            r, c = _tril_colmajor(b)
            rows.append(r + start)
            cols.append(c + start)
            start += b
        return np.concatenate(rows), np.concatenate(cols)

    def lower_bounds(self) -> np.ndarray:
        """0 for the diagonal of Λ, −∞ off it (lme4's `lower`)."""
        rows, cols = self.index()
        return np.where(rows == cols, 0.0, -np.inf)

    def factor(self, theta: np.ndarray) -> np.ndarray:
        """Λ from θ."""
        lam = np.zeros((self.q, self.q))
        rows, cols = self.index()
        lam[rows, cols] = theta
        return lam

    def theta_of(self, lam: np.ndarray) -> np.ndarray:
        """θ of a Λ with this block pattern."""
        rows, cols = self.index()
        return lam[rows, cols]

    def start(self) -> np.ndarray:
        return np.where(np.isfinite(self.lower_bounds()), 1.0, 0.0)


def blocks(s: CaseSums, st: Structure, theta: np.ndarray) -> Blocks:
    """The per-case blocks at θ (raises LinAlgError when some M_i is not positive definite),
    computed once per group of cases with the same design (`case_groups`)."""
    e = group_algebra(s.groups, list(st.cols), st.factor(theta))
    idx = s.groups.index
    return Blocks(e.lam, e.logdet_m, e.a[idx], e.b[idx], e.c, e.xwx, e.xwy, e.ywy, None)


@dataclass(frozen=True)
class Gls:
    """GLS at θ: C = (XᵀWX)⁻¹, β̂, r² = yᵀWy − β̂ᵀXᵀWy, log|XᵀWX|."""

    cinv: np.ndarray
    beta: np.ndarray
    rss: float
    logdet_x: float


def gls(e: Blocks) -> Gls:
    chol = np.linalg.cholesky(e.xwx)
    cinv = np.linalg.inv(e.xwx)
    beta = cinv @ e.xwy
    rss = e.ywy - float(beta @ e.xwy)
    return Gls((cinv + cinv.T) / 2.0, beta, max(rss, 0.0), 2.0 * float(np.log(np.diag(chol)).sum()))


def _reml(e: Blocks, g: Gls, n_obs: int) -> float:
    dof = n_obs - e.xwx.shape[0]
    if g.rss <= 0.0:
        return -np.inf
    return e.logdet_m + g.logdet_x + dof * (1.0 + np.log(2.0 * np.pi * g.rss / dof))


def profiled_deviance(s: CaseSums, st: Structure, theta: np.ndarray) -> float:
    """REML criterion d(θ) as `lme4::lmer(..., REML = TRUE)` reports it (`deviance(fit,
    REML = TRUE)`)."""
    try:
        e = group_algebra(s.groups, list(st.cols), st.factor(theta))
        return _reml(e, gls(e), s.n_obs)
    except np.linalg.LinAlgError:
        return np.inf


def theta_index(st: Structure) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of Λ that each θ_k is."""
    return st.index()


def deviance_and_gradient(s: CaseSums, st: Structure, theta: np.ndarray) -> tuple[float, np.ndarray]:
    """d(θ) and its gradient. With V_i = I + Z_i Λ Λᵀ Z_iᵀ, W = V⁻¹, C = (XᵀWX)⁻¹ and
    u_i = Z_iᵀ W_i (y_i − X_i β̂):

        ∂d/∂θ_k = tr(S G_k),  G_k = ∂(ΛΛᵀ)/∂θ_k,  S = Σ_i [Z_iᵀW_iZ_i − B_i C B_iᵀ]
                  − (N − p)/r² Σ_i u_i u_iᵀ,  B_i = Z_iᵀ W_i X_i

    (∂ log|V| = tr(W ∂V), ∂ log|XᵀWX| = −tr(C XᵀW ∂V W X), ∂r² = −yᵀP ∂V P y), and
    tr(S G_k) = 2 (S Λ)_{rc} for θ_k = Λ_{rc}.
    """
    gr, cols = s.groups, list(st.cols)
    try:
        e = group_algebra(gr, cols, st.factor(theta))
        g = gls(e)
    except np.linalg.LinAlgError:
        return np.inf, np.zeros_like(theta)
    dev = _reml(e, g, s.n_obs)
    if not np.isfinite(dev):
        return dev, np.zeros_like(theta)
    dof = s.n_obs - e.xwx.shape[0]
    u = residuals(gr, e, g.beta)
    wbc = gr.count[:, None, None] * (e.b @ g.cinv)
    smat = (np.tensordot(gr.count, e.a, axes=1) - np.tensordot(wbc, e.b, axes=([0, 2], [0, 2]))
            - dof / g.rss * (u.T @ u))
    sl = 2.0 * smat @ e.lam
    rows, cols_k = theta_index(st)
    return dev, sl[rows, cols_k]


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
    lam = st.factor(theta)
    return st.theta_of(lam * np.where(np.diag(lam) < 0, -1.0, 1.0)[None, :])


def block_start(st: Structure, cov: np.ndarray) -> np.ndarray:
    """θ of `st` closest to a relative covariance ΛΛᵀ of the same q (a warm start from a
    fit of another structure): the Cholesky factor of each diagonal block, ridged."""
    lam = np.zeros_like(cov)
    start = 0
    for b in st.blocks:
        blk = cov[start:start + b, start:start + b]
        ridge = 1e-4 * max(float(np.trace(blk)) / b, 1e-4)
        lam[start:start + b, start:start + b] = np.linalg.cholesky(blk + ridge * np.eye(b))
        start += b
    return st.theta_of(lam)


def rank_deficient(lam: np.ndarray) -> bool:
    """rePCA (Bates, Kliegl, Vasishth & Baayen 2015, arXiv:1506.04967): the relative
    covariance ΛΛᵀ has fewer dimensions than q when a singular value of Λ (the sd of a
    principal component, in units of σ) is below SINGULAR_TOL — lme4's `isSingular`."""
    return bool(np.linalg.svd(lam, compute_uv=False).min() < SINGULAR_TOL)


def slope_structure(term_cols: Sequence[Sequence[int]], correlated: bool) -> Structure:
    """Intercept plus the X columns of every listed slope term: one correlated block, or
    one block per term (the intercept alone)."""
    cols = [0] + [c for t in term_cols for c in t]
    if correlated or not term_cols:
        return Structure(tuple(cols), (len(cols),))
    return Structure(tuple(cols), (1, *(len(t) for t in term_cols)))
