"""Kenward–Roger small-sample inference for the random-slopes mixed model (`mixed`).

References: Kenward & Roger (1997), "Small sample inference for fixed effects from
restricted maximum likelihood", Biometrics 53:983–997; Halekoh & Højsgaard (2014), "A
Kenward–Roger approximation and parametric bootstrap methods for tests in linear mixed
models — the R package pbkrtest", J. Stat. Softw. 59(9). The numbers equal
`pbkrtest::KRmodcomp` / `lmerTest::anova(fit, ddf = "Kenward-Roger")` and
`emmeans(fit, ..., lmer.df = "kenward-roger")`; the code is our own numpy.

Linear parametrisation (pbkrtest's): V = Σ_k φ_k G_k with φ = (σ², every entry of each
covariance block D_b = σ² Λ_b Λ_bᵀ), G_σ² = I and, for entry (r, s) of a block,
G_rs = Z (E_rs + E_sr) Zᵀ (E_rr once on the diagonal); V is linear in φ, so the second
derivatives R_ij of KR vanish. With Φ = Cov(β̂) = (XᵀV⁻¹X)⁻¹ and P the REML projection
V⁻¹ − V⁻¹XΦXᵀV⁻¹:

    P_i = −XᵀV⁻¹G_iV⁻¹X,    Q_ij = XᵀV⁻¹G_iV⁻¹G_jV⁻¹X,
    I_ij = ½ tr(P G_i P G_j)      (REML expected information),   W = I⁺,
    U = Σ_ij W_ij (Q_ij − P_i Φ P_j),   Φ_A = Φ + 2 Φ U Φ.

For a hypothesis L β = 0 of rank ℓ, with Θ = Lᵀ(LΦLᵀ)⁻¹L (pbkrtest uses the unadjusted Φ
here) and u_i = Θ Φ P_i Φ:

    A1 = Σ_ij W_ij tr(u_i) tr(u_j),   A2 = Σ_ij W_ij tr(u_i u_j),   B = (A1 + 6 A2)/(2ℓ),
    g = ((ℓ+1) A1 − (ℓ+4) A2) / ((ℓ+2) A2),   c1, c2, c3 = (g, ℓ − g, ℓ + 2 − g)/(3ℓ + 2(1 − g)),
    E* = 1/(1 − A2/ℓ),   V* = (2/ℓ)(1 + c1 B)/((1 − c2 B)² (1 − c3 B)),
    ρ = V*/(2 E*²) = (1/ℓ) ((1 − A2/ℓ)/(1 − c2 B))² (1 + c1 B)/(1 − c3 B),
    m = 4 + (ℓ + 2)/(ℓρ − 1),   λ = m (1 − A2/ℓ)/(m − 2)   (λ = 1 when |m − 2| < 0.01),
    F_KR = λ · β̂ᵀLᵀ(L Φ_A Lᵀ)⁻¹Lβ̂ / ℓ ~ F(ℓ, m).

A 1-df contrast lᵀβ: t = lᵀβ̂/√(lᵀΦ_A l) on m df (ℓ = 1, no λ: emmeans / pbkrtest
`Lb_ddf`). The F and every KR quantity are invariant to the basis of L.

Computation in the span of the G_i. (a) Every KR quantity is invariant to a linear
reparametrisation G' = T G of full rank: P' = T P, Q' = T Q Tᵀ, I' = T I Tᵀ,
W' = T⁻ᵀ W T⁻¹, so Σ W'_ab X'_ab = Σ W_ij X_ij for X = Q − PΦP and for the A1, A2 sums.
We replace G_σ² = I by G_0 = V/σ² (same span while σ² > 0); then V⁻¹G_0V⁻¹ = V⁻¹/σ²,
P_0 = −Φ⁻¹/σ², Q_0j = −P_j/σ², Q_00 = Φ⁻¹/σ⁴, I_00 = ½(N − p) (PV is idempotent of
rank N − p), I_0j = ½ tr(P G_j)/σ² (PVP = P), and Q_0j − P_0ΦP_j = Q_00 − P_0ΦP_0 = 0: U
needs only the slope entries. (b) On the likelihood ridge of `re_rule` step 1 (every
slope term in Z, X square on the cells) σ² I = Z (σ²(X_cᵀX_c)⁻¹) Zᵀ lies in the span of
the other G_i, so I is singular. Let the K matrices G span r < K dimensions: G = T G̃
with G̃ a basis and T (K × r) of full column rank. Then P = T P̃, Q = T Q̃ Tᵀ,
I = T Ĩ Tᵀ with Ĩ non-singular, and every KR sum is Σ_ij W_ij (T X̃ Tᵀ)_ij =
tr(TᵀWT X̃). With W = I⁺ = (T⁺)ᵀ Ĩ⁻¹ T⁺ (T full column rank, Ĩ invertible),
TᵀWT = (T⁺T)ᵀ Ĩ⁻¹ (T⁺T) = Ĩ⁻¹: the pseudo-inverse gives exactly the minimal
parametrisation's answer. Every point of the ridge has the same V, hence the same Φ,
P_i, Q_ij, I and F, m (tests/analysis/stats/test_kenward_roger.py checks both).

Per-case algebra (V is block diagonal over cases), relative to σ² as `mixed.Blocks`:
A_c = Z_cᵀW_cZ_c, B_c = Z_cᵀW_cX_c, C = (XᵀWX)⁻¹, R_c = B_c C B_cᵀ, Q̃_j = Σ_c B_cᵀE_jB_c:

    P_j = −Q̃_j,   Q_jk = Σ_c B_cᵀ E_j A_c E_k B_c,   I_0j = ½ tr((Σ_c A_c − R_c) E_j),
    2 I_jk = Σ_c tr(A_c E_j A_c E_k) − tr(A_c E_j R_c E_k) − tr(R_c E_j A_c E_k)
             + tr(C Q̃_j C Q̃_k),
    Σ_jk W_jk Q_jk = Σ_c B_cᵀ M_c B_c,  M_c[a, d] = Σ_bc 𝒲[(a,b),(c,d)] A_c[b, c],
    𝒲 = Eᵀ W E (E the K × q² stack of the E_j),

so the cost is O(n q⁴) in the number of cases n; the relative quantities give A1, A2,
m, λ unchanged (they are invariant to V → cV) and Φ_A = σ² Φ_A,rel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.stats.mixed import CaseSums, Structure, blocks, gls
from eval_harness.analysis.stats.reml_hessian import pair_traces

#: eigenvalues of the information below this fraction of the largest are its null space
#: (the ridge direction of re_rule step 1), inverted as 0 (Moore–Penrose); √ε as
#: MASS::ginv, which pbkrtest uses for a singular information. Measured on 600 fits of
#: bench_type1's incomplete scenarios (full structure): the ridge direction at ≤ 3e-16,
#: the next eigenvalue ≥ 3e-4 except where the fit puts a stratum at (nearly) 0 (down to
#: 1e-21) — the fits re_rule step 4 replaces by the classical structure
PINV_RCOND = float(np.sqrt(np.finfo(float).eps))


@dataclass(frozen=True)
class KenwardRoger:
    """The fit-level KR quantities, relative to σ² (V/σ²): what every test needs."""

    beta: np.ndarray
    sigma2: float
    phi: np.ndarray  # C = Φ/σ²
    phi_adj: np.ndarray  # Φ_A/σ²
    p_mats: np.ndarray  # (K + 1, p, p): P_0 (G_0 = V/σ²), then one per covariance entry
    w: np.ndarray  # (K + 1, K + 1): W = I⁺

    @property
    def cov_adjusted(self) -> np.ndarray:
        """Φ_A, the bias-corrected Cov(β̂) (`pbkrtest::vcovAdj`)."""
        return self.sigma2 * self.phi_adj


def entry_matrices(st: Structure) -> np.ndarray:
    """E_rs + E_sr (E_rr on the diagonal) for every entry r ≥ s of each covariance
    block of the structure, stacked (K, q, q)."""
    out = []
    start = 0
    for b in st.blocks:
        for s in range(b):
            for r in range(s, b):
                e = np.zeros((st.q, st.q))
                e[start + r, start + s] = e[start + s, start + r] = 1.0
                out.append(e)
        start += b
    return np.array(out)


def adjust(sums: CaseSums, st: Structure, theta: np.ndarray) -> KenwardRoger:
    """Φ_A and the ingredients of every KR test at a REML optimum θ̂ of structure `st`
    (σ̂² = r²/(N − p), profiled, as `mixed.fit_at`)."""
    e = blocks(sums, st, theta)
    g = gls(e)
    q, p = st.q, e.b.shape[2]
    n = len(e.a)
    emat = entry_matrices(st)
    kk = len(emat)
    eflat = emat.reshape(kk, q * q)
    cmat = g.cinv
    bflat = e.b.reshape(n, q * p)
    kq = (bflat.T @ bflat).reshape(q, p, q, p).transpose(0, 2, 1, 3).reshape(q * q, p * p)
    qt = (eflat @ kq).reshape(kk, p, p)  # Q̃_j = Σ_c B_cᵀ E_j B_c
    rmat = (e.b @ cmat) @ e.b.transpose(0, 2, 1)  # R_c
    cq = cmat @ qt
    info = np.zeros((kk + 1, kk + 1))
    two_i = (pair_traces(e.a, e.a, eflat, q) - pair_traces(e.a, rmat, eflat, q)
             - pair_traces(rmat, e.a, eflat, q)
             + cq.reshape(kk, p * p) @ cq.transpose(0, 2, 1).reshape(kk, p * p).T)
    info[1:, 1:] = (two_i + two_i.T) / 4.0
    smat = e.a.sum(axis=0) - rmat.sum(axis=0)
    info[0, 1:] = info[1:, 0] = 0.5 * (eflat @ smat.reshape(q * q))
    info[0, 0] = 0.5 * (sums.n_obs - p)
    w = np.linalg.pinv(info, rcond=PINV_RCOND, hermitian=True)
    wdd = w[1:, 1:]
    # Σ_jk W_jk Q_jk = Σ_c B_cᵀ M_c B_c
    w4 = (eflat.T @ wdd @ eflat).reshape(q, q, q, q).transpose(1, 2, 0, 3).reshape(q * q, q * q)
    mmat = (e.a.reshape(n, q * q) @ w4).reshape(n, q, q)
    wq = np.einsum("cax,cay->xy", e.b, mmat @ e.b)
    wqt = (wdd @ qt.reshape(kk, p * p)).reshape(kk, p, p)
    wpp = np.einsum("jxy,jyz->xz", cq.transpose(0, 2, 1), wqt)  # Σ W_jk Q̃_j C Q̃_k
    umat = wq - wpp
    phi_adj = cmat + 2.0 * cmat @ umat @ cmat
    p_mats = np.concatenate([-e.xwx[None], -qt])
    sigma2 = g.rss / (sums.n_obs - p)
    return KenwardRoger(g.beta, sigma2, cmat, (phi_adj + phi_adj.T) / 2.0, p_mats, w)


def _a1_a2(kr: KenwardRoger, hyp: np.ndarray) -> tuple[float, float]:
    theta = hyp.T @ np.linalg.solve(hyp @ kr.phi @ hyp.T, hyp)
    u = (theta @ kr.phi) @ kr.p_mats @ kr.phi  # u_i = Θ Φ P_i Φ
    tr = np.trace(u, axis1=1, axis2=2)
    k = len(u)
    prod = u.reshape(k, -1) @ u.transpose(0, 2, 1).reshape(k, -1).T  # tr(u_i u_j)
    return float(tr @ kr.w @ tr), float((kr.w * prod).sum())


def kr_ddf(a1: float, a2: float, rank: int) -> float:
    """Denominator df m of Kenward & Roger (1997) from A1, A2 (module docstring)."""
    q = float(rank)
    b = (a1 + 6.0 * a2) / (2.0 * q)
    g = ((q + 1.0) * a1 - (q + 4.0) * a2) / ((q + 2.0) * a2)
    den = 3.0 * q + 2.0 * (1.0 - g)
    c1, c2, c3 = g / den, (q - g) / den, (q + 2.0 - g) / den
    v0 = 1.0 + c1 * b
    v0 = 0.0 if abs(v0) < 1e-10 else v0
    v1, v2 = 1.0 - c2 * b, 1.0 - c3 * b
    num = 1.0 - a2 / q
    ratio = 1.0 if abs(num) < 1e-14 and abs(v1) < 1e-14 else num / v1  # pbkrtest .divZero
    rho = ratio**2 * v0 / v2 / q
    return 4.0 + (q + 2.0) / (q * rho - 1.0)


def kr_term(kr: KenwardRoger, hyp: np.ndarray) -> tuple[float, float]:
    """(F_KR, m) for L β = 0 (`hyp` = L, full row rank)."""
    rank = int(np.linalg.matrix_rank(hyp))
    a1, a2 = _a1_a2(kr, hyp)
    m = kr_ddf(a1, a2, rank)
    lb = hyp @ kr.beta
    wald = float(lb @ np.linalg.solve(hyp @ kr.cov_adjusted @ hyp.T, lb))
    scale = 1.0 if abs(m - 2.0) < 1e-2 else m * (1.0 - a2 / rank) / (m - 2.0)
    return scale * wald / rank, m


def kr_contrast(kr: KenwardRoger, vec: np.ndarray) -> tuple[float, float]:
    """(Var_A(lᵀβ̂) = lᵀΦ_A l, KR df m with ℓ = 1) of one contrast."""
    a1, a2 = _a1_a2(kr, vec[None, :])
    return float(vec @ kr.cov_adjusted @ vec), kr_ddf(a1, a2, 1)
