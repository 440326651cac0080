"""Multiple-comparison corrections, exactly as R's `p.adjust`.

With m the number of non-missing p-values and p₍₁₎ ≤ … ≤ p₍ₘ₎:

    Holm (1979):                 p̃₍ᵢ₎ = min(1, max_{j≤i} (m − j + 1) p₍ⱼ₎)
    Benjamini–Hochberg (1995):   p̃₍ᵢ₎ = min(1, min_{j≥i} m/j · p₍ⱼ₎)

NaN entries stay NaN and do not count in m (R: `p.adjust(p, n = length(p[!is.na(p)]))`).
Unlike statsmodels' `multipletests`, which counts them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from eval_harness.analysis.stats.input_errors import StatsInputError

_ALIASES = {"holm": "holm", "bh": "bh", "fdr_bh": "bh", "none": "none"}


def canonical_correction(name: object) -> str:
    """Canonical correction name: `holm` | `bh` | `none` (`fdr_bh` → `bh`, any case).

    Raises `StatsInputError` (a `ValueError`) for anything else, including None.
    """
    if not isinstance(name, str) or name.strip().lower() not in _ALIASES:
        raise StatsInputError(
            f"unknown correction {name!r}; use one of holm, bh, fdr_bh, none"
        )
    return _ALIASES[name.strip().lower()]


def adjust_pvalues(p: Sequence[float] | np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values (same order as `p`); NaN in, NaN out, not in the family."""
    kind = canonical_correction(method)
    arr = np.asarray(p, dtype=float).ravel()
    out = np.full(arr.shape, np.nan)
    present = ~np.isnan(arr)
    vals = arr[present]
    m = vals.size
    if m == 0:
        return out
    if np.any((vals < 0) | (vals > 1)):
        raise StatsInputError("p-values must lie in [0, 1]")
    if kind == "none":
        out[present] = vals
        return out
    if kind == "holm":
        order = np.argsort(vals, kind="stable")
        mult = m - np.arange(m)
        adj_sorted = np.minimum(1.0, np.maximum.accumulate(mult * vals[order]))
    else:
        order = np.argsort(-vals, kind="stable")
        mult = m / np.arange(m, 0, -1)
        adj_sorted = np.minimum(1.0, np.minimum.accumulate(mult * vals[order]))
    adj = np.empty(m)
    adj[order] = adj_sorted
    out[present] = adj
    return out
