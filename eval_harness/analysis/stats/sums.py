"""Closed-form sums of squares of a balanced cases × cells design (batch-capable).

Input `y` has shape (..., n, L1, ..., Lk): any leading batch axes (many simulated
experiments at once), then cases, then one axis per factor. With Z the orthonormal
contrast coordinates of every case (see `design`), and Z_T the df_T coordinates of
term T:

    SS_T        = n · ‖mean_i Z_T,i‖²                       (term)
    SS_T×case   = Σ_i ‖Z_T,i − mean Z_T‖²                     (its error stratum)
    S_T         = (Z_T − Z̄_T)ᵀ(Z_T − Z̄_T) / (n − 1)           (df_T × df_T covariance)
    ε_GG        = tr(S_T)² / (df_T · tr(S_T²))                (Greenhouse & Geisser 1959)
    SS_case     = C · Σ_i (ȳ_i − ȳ)²,  C = Π L_f              (between-case stratum)

References: Greenhouse & Geisser (1959), Psychometrika 24:95–112; Maxwell, Delaney &
Kelley (2018) ch. 12 and 14.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eval_harness.analysis.stats.design import (
    term_components,
    term_subsets,
    to_contrast_coordinates,
)


@dataclass(frozen=True)
class TermSums:
    """Arrays shaped like the batch axes (scalars for one experiment)."""

    subset: tuple[int, ...]
    df: int
    ss: np.ndarray
    ss_error: np.ndarray
    gg_epsilon: np.ndarray


@dataclass(frozen=True)
class DesignSums:
    """All strata of one (or a batch of) balanced experiment(s)."""

    n_cases: int
    n_cells: int
    terms: tuple[TermSums, ...]
    ss_total: np.ndarray
    ss_case: np.ndarray
    sum_sq_raw: np.ndarray


def design_sums(y: np.ndarray, k: int) -> DesignSums:
    """Sums of squares of every term, its term × case stratum, and GG epsilon."""
    y = np.asarray(y, dtype=float)
    n = y.shape[y.ndim - k - 1]
    cells = int(np.prod(y.shape[y.ndim - k :]))
    coords = to_contrast_coordinates(y, k)
    factor_axes = tuple(range(y.ndim - k, y.ndim))
    case_axis = y.ndim - k - 1
    lead_and_case = (*y.shape[:case_axis], n)
    flat = y.reshape((*lead_and_case, cells))
    grand = flat.mean(axis=(-2, -1), keepdims=True)
    ss_total = ((flat - grand) ** 2).sum(axis=(-2, -1))
    case_means = y.mean(axis=factor_axes)
    ss_case = cells * ((case_means - case_means.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    sum_sq_raw = (flat**2).sum(axis=(-2, -1))
    terms = []
    with np.errstate(all="ignore"):
        for subset in term_subsets(k):
            z = term_components(coords, k, subset)  # (..., n, d)
            d = z.shape[-1]
            zbar = z.mean(axis=-2, keepdims=True)
            ss = n * (zbar**2).sum(axis=(-2, -1))
            resid = z - zbar
            ss_err = (resid**2).sum(axis=(-2, -1))
            if d == 1:
                eps = np.ones_like(ss)
            else:
                cov = np.einsum("...ni,...nj->...ij", resid, resid)
                eps = ss_err**2 / (d * (cov**2).sum(axis=(-2, -1)))
            terms.append(TermSums(subset, d, ss, ss_err, eps))
    return DesignSums(n, cells, tuple(terms), ss_total, ss_case, sum_sq_raw)
