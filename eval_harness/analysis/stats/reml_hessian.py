"""Analytic Hessian of the REML deviance in (θ, σ) and the Jacobian of Cov(β̂), for the
Satterthwaite df of lmerTest (Kuznetsova, Brockhoff & Christensen 2017, J. Stat. Softw.
82(13)), computed from the per-case blocks of `mixed.blocks` (cost linear in cases).

D(θ, σ) = log|V| + log|XᵀV⁻¹X| + yᵀPy + (N − p) log 2π, V = σ² (I + Z Λ Λᵀ Zᵀ),
P = V⁻¹ − V⁻¹X (XᵀV⁻¹X)⁻¹ XᵀV⁻¹ (lmerTest's `devfun_vp`). With V_j = ∂V/∂φ_j
(e.g. Searle, Casella & McCulloch 1992, Variance Components, §6.8):

    ∂²D/∂φ_j∂φ_k = −tr(P V_k P V_j) + tr(P V_jk) + 2 yᵀP V_k P V_j P y − yᵀP V_jk P y.

For θ_k = Λ_{rc}: V_k = σ² Z G_k Zᵀ, G_k = E_rc Λᵀ + Λ E_rcᵀ, and
V_jk = σ² Z (E_k E_jᵀ + E_j E_kᵀ) Zᵀ. For σ: V_σ = 2V/σ, V_σσ = 2V/σ², V_σθ = 2V_θ/σ,
and PVP = P, so every σ entry reduces to θ quantities:

    H_θjσ = 2 tr(G_j U)/σ³,   H_σσ = −2(N − p)/σ² + 6 r²/σ⁴,

U = Σ u_i u_iᵀ, u_i = Z_iᵀW_i(y_i − X_iβ̂), r² the relative residual sum of squares. In
relative terms ZᵀPZ σ² = diag(a_i) − B C Bᵀ (a_i = Z_iᵀW_iZ_i, B_i = Z_iᵀW_iX_i,
C = (XᵀWX)⁻¹, W relative), so with R_i = B_i C B_iᵀ and Q_k = Σ_i B_iᵀ G_k B_i:

    tr(P V_k P V_j) = Σ_i tr(a_i G_k a_i G_j) − Σ_i tr(a_i G_k R_i G_j)
                      − Σ_i tr(R_i G_k a_i G_j) + tr(C Q_k C Q_j),
    σ² yᵀP V_k P V_j P y = Σ_i (G_k u_i)ᵀ a_i (G_j u_i) − g_kᵀ C g_j,  g_k = Σ_i B_iᵀ G_k u_i,

and ∂Cov(β̂)/∂θ_k = σ² C Q_k C, ∂Cov(β̂)/∂σ = 2σ C. Sums over cases of products of
two per-case matrices are formed once as q² × q² (or qp × qp) cross-products, then
contracted with the G_k. Cases with the same design share a_i, B_i and R_i
(`case_groups`): given the groups' blocks, each sum is one over groups, weighted by their
counts, with Σ u_i and Σ u_i u_iᵀ per group.
"""

from __future__ import annotations

import numpy as np

from eval_harness.analysis.stats.case_groups import group_algebra, residual_moments
from eval_harness.analysis.stats.mixed import Blocks, CaseSums, Gls, Structure, gls, theta_index


def pinv_positive(hess: np.ndarray, tol: float = 1e-8) -> np.ndarray:
    """Moore–Penrose inverse over the eigenvalues > tol, as lmerTest inverts the deviance
    Hessian (a flat direction — a variance on the boundary — gets no sampling variance)."""
    hess = np.where(np.isfinite(hess), hess, 0.0)
    vals, vecs = np.linalg.eigh((hess + hess.T) / 2.0)
    pos = vals > tol
    return (vecs[:, pos] / vals[pos]) @ vecs[:, pos].T


def _g_matrices(st: Structure, lam: np.ndarray) -> np.ndarray:
    """G_k = ∂(ΛΛᵀ)/∂θ_k, stacked (K, q, q)."""
    rows, cols = theta_index(st)
    g = np.zeros((rows.size, st.q, st.q))
    for k, (r, c) in enumerate(zip(rows, cols, strict=True)):
        g[k, r, :] += lam[:, c]
        g[k, :, r] += lam[:, c]
    return g


def pair_traces(left: np.ndarray, right: np.ndarray, gflat: np.ndarray, q: int) -> np.ndarray:
    """H[k, j] = Σ_i tr(L_i G_k R_i G_j) for stacks L, R of (n, q, q)."""
    t = left.reshape(len(left), q * q).T @ right.reshape(len(right), q * q)  # [ab, cd]
    t = t.reshape(q, q, q, q).transpose(1, 2, 3, 0).reshape(q * q, q * q)  # [bc, da]
    return gflat @ t @ gflat.T


def vp_hessian(s: CaseSums, st: Structure, e: Blocks, g: Gls, sigma: float
               ) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """(Hessian of D at (θ, σ), (∂Cov(β̂)/∂θ_1, …, ∂Cov(β̂)/∂σ)), from per-case blocks
    or from the groups' (`case_groups.group_algebra`)."""
    q, p = st.q, e.b.shape[2]
    n = len(e.a)
    if e.group is not None:
        w = s.groups.count
        usum, uu = residual_moments(s.groups, e, g.beta)
    else:
        w = np.ones(n)
        usum = e.c - e.b @ g.beta
        uu = usum[:, :, None] * usum[:, None, :]
    gm = _g_matrices(st, e.lam)
    kk = len(gm)
    gflat = gm.reshape(kk, q * q)
    rmat = (e.b @ g.cinv) @ e.b.transpose(0, 2, 1)  # R_i = B_i C B_iᵀ
    wa, wr = w[:, None, None] * e.a, w[:, None, None] * rmat
    bflat = e.b.reshape(n, q * p)
    kq = ((w[:, None] * bflat).T @ bflat).reshape(q, p, q, p).transpose(0, 2, 1, 3).reshape(
        q * q, p * p)
    qk = (gflat @ kq).reshape(kk, p, p)  # Q_k
    cq = g.cinv @ qk
    trace = (pair_traces(wa, e.a, gflat, q) - pair_traces(wa, rmat, gflat, q)
             - pair_traces(wr, e.a, gflat, q)
             + cq.reshape(kk, p * p) @ cq.transpose(0, 2, 1).reshape(kk, p * p).T)
    fmat = (bflat.T @ usum).reshape(q, p, q).transpose(0, 2, 1).reshape(q * q, p)  # Σ B_i[a]u_i[b]
    gvec = gflat @ fmat  # g_k
    yterm = pair_traces(e.a, uu, gflat, q) - gvec @ g.cinv @ gvec.T
    umat = uu.sum(axis=0)
    smat = wa.sum(axis=0) - wr.sum(axis=0)  # Σ_i a_i − B_i C B_iᵀ
    rows, cols = theta_index(st)
    # G_jk = E_k E_jᵀ + E_j E_kᵀ is non-zero only when θ_j, θ_k share a column of Λ
    same = cols[:, None] == cols[None, :]
    second = np.where(same, 2.0 * smat[rows[:, None], rows[None, :]], 0.0)
    second_y = np.where(same, 2.0 * umat[rows[:, None], rows[None, :]], 0.0)
    s2 = sigma * sigma
    h = np.zeros((kk + 1, kk + 1))
    h_tt = -trace + second + (2.0 * yterm - second_y) / s2
    h[:kk, :kk] = (h_tt + h_tt.T) / 2.0
    h[:kk, kk] = h[kk, :kk] = 2.0 * (gflat @ umat.reshape(q * q)) / (s2 * sigma)
    dof = s.n_obs - p
    h[kk, kk] = -2.0 * dof / s2 + 6.0 * g.rss / (s2 * s2)
    grads = (*(s2 * (g.cinv @ qk[k] @ g.cinv) for k in range(kk)), 2.0 * sigma * g.cinv)
    return h, grads


def profiled_hessian(s: CaseSums, st: Structure, theta: np.ndarray) -> np.ndarray:
    """Hessian of the profiled criterion d(θ) = D(θ, σ̂(θ)) (`mixed.profiled_deviance`):
    σ̂ minimises D at every θ (∂D/∂σ = 0 along σ̂(θ)), so

        ∇²d = H_θθ − H_θσ H_σθ / H_σσ

    (the Schur complement of H_σσ in D's Hessian at (θ, σ̂(θ))); the optimiser's Newton
    steps use it. Raises LinAlgError where d is not finite."""
    e = group_algebra(s.groups, list(st.cols), st.factor(theta))
    g = gls(e)
    dof = s.n_obs - e.xwx.shape[0]
    if not g.rss > 0.0:
        raise np.linalg.LinAlgError("r² = 0: the criterion is unbounded")
    h, _ = vp_hessian(s, st, e, g, float(np.sqrt(g.rss / dof)))
    k = len(theta)
    return h[:k, :k] - np.outer(h[:k, k], h[k, :k]) / h[k, k]
