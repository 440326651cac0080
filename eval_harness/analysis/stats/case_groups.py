"""Cases that share a design: the mixed model's per-case algebra once per group.

Everything of case i in the REML criterion that is not a sum over its response depends on
XᵢᵀXᵢ only (M_i = ΛᵀZᵢᵀZᵢΛ + I, W_i); on cell means XᵢᵀXᵢ is fixed by which cells the
case answered, so the cases fall into few groups (2 % of 16 cells missing: ≈ 300 groups
at 5,000 cases, most of them complete). With P = Λ M⁻¹ Λᵀ (q × q, the same for the whole
group) and tᵢ = Xᵢᵀyᵢ, r the random-effect columns of X:

    XᵢᵀWᵢXᵢ = XᵢᵀXᵢ − (ZᵢᵀXᵢ)ᵀ P ZᵢᵀXᵢ,   XᵢᵀWᵢyᵢ = tᵢ − (ZᵢᵀXᵢ)ᵀ P tᵢ[r],
    yᵢᵀWᵢyᵢ = yᵢᵀyᵢ − tᵢ[r]ᵀ P tᵢ[r],    ZᵢᵀWᵢ v = F (Zᵢᵀv),  F = I − ZᵢᵀZᵢ P

(Woodbury: Wᵢ = I − ZᵢΛMᵢ⁻¹ΛᵀZᵢᵀ), so the sums over a group's cases need only its count
w, T = Σ tᵢ and S = Σ tᵢ[r] tᵢ[r]ᵀ: the Cholesky factors and solves run once per group,
not once per case, and the results are those of the per-case sums up to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def unique_rows(a: np.ndarray, weights: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index of each distinct row's first occurrence, the distinct row of every row,
    counts) of a 2-d array, rows compared exactly. A 1-d sort of one random projection
    per row (`weights`, seeded by default) instead of `np.unique(axis=0)`'s lexicographic
    sort of whole rows (10× slower at 5,000 × 256); when rows with equal projections
    differ, that sort decides."""
    a = np.ascontiguousarray(a, dtype=float)
    if len(a) == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    proj = np.random.default_rng(0).uniform(1.0, 2.0, size=a.shape[1]) if weights is None \
        else weights
    _, first, inverse, counts = np.unique(a @ proj, return_index=True, return_inverse=True,
                                          return_counts=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(a[first][inverse], a):
        _, first, inverse, counts = np.unique(a, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    return first, inverse, counts


@dataclass(frozen=True)
class CaseGroups:
    """Cases grouped by identical XᵢᵀXᵢ."""

    xtx: np.ndarray  # (g, p, p) XᵢᵀXᵢ of the group's cases
    count: np.ndarray  # (g,) cases in the group
    index: np.ndarray  # (n,) group of each case
    t_sum: np.ndarray  # (g, p) Σ Xᵢᵀyᵢ over the group
    t_outer: np.ndarray  # (g, p, p) Σ (Xᵢᵀyᵢ)(Xᵢᵀyᵢ)ᵀ over the group
    yty: float  # Σ yᵢᵀyᵢ over every case

    @classmethod
    def of(cls, xtx: np.ndarray, xty: np.ndarray, yty: np.ndarray) -> CaseGroups:
        n, p = xty.shape
        # equal designs give bit-equal sums (the same rows added in the same order);
        # a design summed in another row order only makes one more group
        first, index, count = unique_rows(xtx.reshape(n, p * p))
        g = len(first)
        t_sum = np.zeros((g, p))
        np.add.at(t_sum, index, xty)
        t_outer = np.zeros((g, p, p))
        np.add.at(t_outer, index, xty[:, :, None] * xty[:, None, :])
        return cls(xtx[first], count.astype(float), index, t_sum, t_outer, float(yty.sum()))


@dataclass(frozen=True)
class GroupAlgebra:
    """The per-case blocks of one group (equal for its cases) and the totals, relative
    to σ²: a = ZᵀWZ, b = ZᵀWX, f = F (c_i = f zᵢ, zᵢ = Zᵢᵀyᵢ); XᵀWX, XᵀWy, yᵀWy and
    Σ log|M_i| summed over every case."""

    lam: np.ndarray
    logdet_m: float
    a: np.ndarray  # (g, q, q)
    b: np.ndarray  # (g, q, p)
    f: np.ndarray  # (g, q, q)
    xwx: np.ndarray
    xwy: np.ndarray
    ywy: float


def group_algebra(gr: CaseGroups, cols: list[int], lam: np.ndarray) -> GroupAlgebra:
    """The blocks at Λ (raises LinAlgError when some M_i is not positive definite)."""
    q = lam.shape[0]
    w = gr.count
    ztx = gr.xtx[:, cols, :]
    ztz = ztx[:, :, cols]
    m = np.matmul(lam.T, ztz @ lam) + np.eye(q)  # M = ΛᵀZᵀZΛ + I
    chol = np.linalg.cholesky(m)
    logdet = 2.0 * float(w @ np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1))
    half = np.linalg.solve(chol, np.broadcast_to(lam.T, m.shape))  # L⁻¹Λᵀ: P = halfᵀ half
    pm = np.matmul(half.transpose(0, 2, 1), half)
    pzx = pm @ ztx  # P ZᵀX
    b = ztx - ztz @ pzx
    f = np.eye(q) - ztz @ pm
    t_r = gr.t_sum[:, cols]
    xwx = np.tensordot(w, gr.xtx - np.matmul(ztx.transpose(0, 2, 1), pzx), axes=1)
    xwy = gr.t_sum.sum(axis=0) - np.tensordot(pzx, t_r, axes=([0, 1], [0, 1]))
    ywy = gr.yty - float(np.vdot(pm, gr.t_outer[:, cols][:, :, cols]))
    a = b[:, :, cols]
    return GroupAlgebra(lam, logdet, (a + a.transpose(0, 2, 1)) / 2.0, b, f,
                        (xwx + xwx.T) / 2.0, xwy, ywy)


def residual_moments(gr: CaseGroups, cols: list[int], e: GroupAlgebra, beta: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per group, Σ uᵢ and Σ uᵢuᵢᵀ with uᵢ = ZᵢᵀWᵢ(yᵢ − Xᵢβ) = F (tᵢ − XᵢᵀXᵢβ)[r]."""
    t_r = gr.t_sum[:, cols]
    fit_r = gr.xtx[:, cols, :] @ beta  # (XᵢᵀXᵢ β)[r], equal within the group
    s = gr.t_outer[:, cols][:, :, cols]
    cross = t_r[:, :, None] * fit_r[:, None, :]
    d = s - cross - cross.transpose(0, 2, 1) + gr.count[:, None, None] * (
        fit_r[:, :, None] * fit_r[:, None, :])
    usum = np.matmul(e.f, (t_r - gr.count[:, None] * fit_r)[:, :, None])[:, :, 0]
    uu = np.matmul(np.matmul(e.f, d), e.f.transpose(0, 2, 1))
    return usum, (uu + uu.transpose(0, 2, 1)) / 2.0
