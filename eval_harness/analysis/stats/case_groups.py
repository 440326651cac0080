"""Cases that share a design: the mixed model's per-case algebra once per group.

Of case i's part of the REML criterion, the factorisation depends on XᵢᵀXᵢ only
(M_i = ΛᵀZᵢᵀZᵢΛ + I = L_i L_iᵀ); on cell means XᵢᵀXᵢ is fixed by which cells the case
answered, so the cases fall into few groups (2 % of 16 cells missing: ≈ 300 groups at
5,000 cases, most of them complete). Per group, with H = L⁻¹Λᵀ (q × q) and HX = H ZᵀX:

    XᵢᵀWᵢXᵢ = XᵢᵀXᵢ − HXᵀHX,   ZᵢᵀWᵢXᵢ = ZᵢᵀXᵢ − HZᵀHX   (HZ: the Z columns of HX)

(Woodbury: Wᵢ = I − ZᵢΛMᵢ⁻¹ΛᵀZᵢᵀ), and per case, with zᵢ = Zᵢᵀyᵢ and hᵢ = H zᵢ (a
matrix-vector product; the Cholesky factors and the q × p products run once per group):

    yᵢᵀWᵢyᵢ = yᵢᵀyᵢ − |hᵢ|²,   XᵢᵀWᵢyᵢ = Xᵢᵀyᵢ − HXᵀhᵢ,   ZᵢᵀWᵢyᵢ = zᵢ − HZᵀhᵢ.

Products go through H, never through P = HᵀH = ΛM⁻¹Λᵀ: for a case with missing cells
ZᵀZ is singular and P has an eigenvalue ≈ θ² on its null space that cancels only in
exact arithmetic (formed explicitly, it cost 7 digits of the deviance at θ ≈ 500, where a
variance ratio runs off as σ² → 0); and the y terms stay per case (a sum of zᵢzᵢᵀ over
the group carries rounding into that null space). The results equal the per-case
algebra's up to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: groups of at least this many cases are multiplied group by group (`CaseGroups.matvec`)
BIG_GROUP = 16


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
    xty: np.ndarray  # (n, p) Xᵢᵀyᵢ of every case
    yty: float  # Σ yᵢᵀyᵢ over every case
    #: (group, its cases) of the groups with at least BIG_GROUP cases, and the cases of
    #: the other groups: `matvec` multiplies the first by one matmul per group
    big: tuple[tuple[int, np.ndarray], ...]
    small: np.ndarray

    @classmethod
    def of(cls, xtx: np.ndarray, xty: np.ndarray, yty: np.ndarray) -> CaseGroups:
        n, p = xty.shape
        # equal designs give bit-equal sums (the same rows added in the same order);
        # a design summed in another row order only makes one more group
        first, index, count = unique_rows(xtx.reshape(n, p * p))
        order = np.argsort(index, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(count)])
        big = tuple((int(g), order[bounds[g]:bounds[g + 1]])
                    for g in np.flatnonzero(count >= BIG_GROUP))
        small = np.flatnonzero(count[index] < BIG_GROUP)
        return cls(xtx[first], count.astype(float), index, xty, float(yty.sum()), big, small)

    def matvec(self, mats: np.ndarray, vecs: np.ndarray) -> np.ndarray:
        """mats[group of i] @ vecs[i] for every case i: (g, a, b), (n, b) -> (n, a); one
        matmul per large group, a gathered batch for the cases of the small ones (no
        (n, a, b) copy of the groups' matrices)."""
        out = np.empty((len(vecs), mats.shape[1]))
        for g, cases in self.big:
            out[cases] = vecs[cases] @ mats[g].T
        if len(self.small):
            out[self.small] = np.matmul(mats[self.index[self.small]],
                                        vecs[self.small][:, :, None])[:, :, 0]
        return out

    def sum(self, per_case: np.ndarray) -> np.ndarray:
        """Per-case values (n, ...) summed within each group (g, ...)."""
        out = np.zeros((len(self.count), *per_case.shape[1:]))
        np.add.at(out, self.index, per_case)
        return out


@dataclass(frozen=True)
class Blocks:
    """The algebra at θ, relative to σ² (W_i = V_i⁻¹ σ², V_i/σ² = I + Z_i Λ Λᵀ Z_iᵀ):
    a_i = Z_iᵀW_iZ_i, b_i = Z_iᵀW_iX_i — one per group of cases with the same design
    (`group` gives each case's) or, with `group` None, one per case (`mixed.blocks`) —
    c_i = Z_iᵀW_iy_i per case; XᵀWX, XᵀWy, yᵀWy and Σ log|M_i| summed over every case."""

    lam: np.ndarray
    logdet_m: float
    a: np.ndarray  # (g, q, q), or (n, q, q)
    b: np.ndarray  # (g, q, p), or (n, q, p)
    c: np.ndarray  # (n, q)
    xwx: np.ndarray
    xwy: np.ndarray
    ywy: float
    group: np.ndarray | None = None  # (n,) group of each case; None: a, b are per case


def group_algebra(gr: CaseGroups, cols: list[int], lam: np.ndarray) -> Blocks:
    """The blocks at Λ (raises LinAlgError when some M_i is not positive definite)."""
    q = lam.shape[0]
    w = gr.count
    ztx = gr.xtx[:, cols, :]
    m = np.matmul(lam.T, ztx[:, :, cols] @ lam) + np.eye(q)  # M = ΛᵀZᵀZΛ + I
    chol = np.linalg.cholesky(m)
    logdet = 2.0 * float(w @ np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1))
    h = np.linalg.solve(chol, np.broadcast_to(lam.T, m.shape))  # H = L⁻¹Λᵀ
    hx = h @ ztx  # H ZᵀX
    hz = hx[:, :, cols]  # H ZᵀZ
    b = ztx - np.matmul(hz.transpose(0, 2, 1), hx)
    xwx = np.tensordot(w, gr.xtx - np.matmul(hx.transpose(0, 2, 1), hx), axes=1)
    z = gr.xty[:, cols]
    hy = gr.matvec(h, z)  # h_i = H z_i
    c = z - gr.matvec(hz.transpose(0, 2, 1), hy)
    xwy = gr.xty.sum(axis=0) - np.tensordot(hx, gr.sum(hy), axes=([0, 1], [0, 1]))
    ywy = gr.yty - float(np.vdot(hy, hy))
    a = b[:, :, cols]
    return Blocks(lam, logdet, (a + a.transpose(0, 2, 1)) / 2.0, b, c, (xwx + xwx.T) / 2.0,
                  xwy, ywy, gr.index)


def residuals(gr: CaseGroups, e: Blocks, beta: np.ndarray) -> np.ndarray:
    """uᵢ = ZᵢᵀWᵢ(yᵢ − Xᵢβ) = cᵢ − bᵢβ of every case (n, q)."""
    return e.c - (e.b @ beta)[gr.index]


def residual_moments(gr: CaseGroups, e: Blocks, beta: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per group, Σ uᵢ and Σ uᵢuᵢᵀ (`residuals`)."""
    u = residuals(gr, e, beta)
    return gr.sum(u), gr.sum(u[:, :, None] * u[:, None, :])
