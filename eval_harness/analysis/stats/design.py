"""Design helpers: terms of a full factorial, orthonormal contrasts, cell transforms.

For a factor with L levels, the orthonormal basis used here is the L×L matrix
B = [1/√L · 1, H] whose first column averages and whose remaining L−1 columns H
are orthonormal contrasts (normalised Helmert). Applying Bᵀ along every factor axis
of a cases × cells array gives coordinates in which the effect space of a term T
(products of H over the factors in T and of the averaging column elsewhere) is a
plain slice. Everything computed from those coordinates (sums of squares, the
Greenhouse–Geisser epsilon) is invariant to the choice of orthonormal contrasts.

Reference: Maxwell, Delaney & Kelley (2018), *Designing Experiments and Analyzing
Data*, 3rd ed., ch. 11–12 and 14 (multivariate approach to within-subject designs).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np


def term_subsets(k: int) -> list[tuple[int, ...]]:
    """All non-empty subsets of factor indices, main effects first, then by order.

    Within one order the subsets follow the written factor order (R's `A*B*C`
    order: A, B, C, A:B, A:C, B:C, A:B:C).
    """
    return [s for r in range(1, k + 1) for s in combinations(range(k), r)]


def term_name(factors: Sequence[str], subset: Sequence[int]) -> str:
    """`"model:effort"` — factor names in written order joined by `:`."""
    return ":".join(factors[i] for i in subset)


def orthonormal_basis(n_levels: int) -> np.ndarray:
    """L×L orthogonal matrix: column 0 = 1/√L, columns 1.. = normalised Helmert contrasts."""
    basis = np.zeros((n_levels, n_levels))
    basis[:, 0] = 1.0 / np.sqrt(n_levels)
    for j in range(1, n_levels):
        col = np.zeros(n_levels)
        col[:j] = 1.0
        col[j] = -float(j)
        basis[:, j] = col / np.sqrt(j * (j + 1))
    return basis


def contr_sum(n_levels: int) -> np.ndarray:
    """R's `contr.sum(L)`: identity on the first L−1 rows, −1 on the last row."""
    mat = np.zeros((n_levels, n_levels - 1))
    mat[: n_levels - 1, :] = np.eye(n_levels - 1)
    mat[n_levels - 1, :] = -1.0
    return mat


def to_contrast_coordinates(y: np.ndarray, k: int) -> np.ndarray:
    """Apply Bᵀ along each of the last `k` axes of `y` (leading axes are batch/case)."""
    out = y
    for j in range(k):
        axis = y.ndim - k + j
        basis = orthonormal_basis(y.shape[axis])
        out = np.moveaxis(np.tensordot(out, basis, axes=([axis], [0])), -1, axis)
    return out


def term_slice(shape: Sequence[int], subset: Sequence[int]) -> tuple[slice | int, ...]:
    """Index into the last k axes of contrast coordinates selecting term `subset`."""
    chosen = set(subset)
    return tuple(slice(1, n) if j in chosen else 0 for j, n in enumerate(shape))


def term_components(coords: np.ndarray, k: int, subset: Sequence[int]) -> np.ndarray:
    """The df_T coordinates of term `subset`, flattened: shape (..., df_T)."""
    shape = coords.shape[coords.ndim - k :]
    idx = (Ellipsis, *term_slice(shape, subset))
    comp = coords[idx]
    lead = coords.shape[: coords.ndim - k]
    return comp.reshape((*lead, -1))


def term_df(levels_per_factor: Sequence[int], subset: Sequence[int]) -> int:
    """df_T = Π_{f∈T} (L_f − 1)."""
    return int(np.prod([levels_per_factor[i] - 1 for i in subset]))
