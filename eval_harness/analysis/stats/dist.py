"""Student t, Fisher F and normal tail functions on ``scipy.special`` alone.

``scipy.stats`` costs ~40 MiB of RSS and a tenth of a second to import, and every call
of a frozen-distribution method ~50 µs of argument checking; the analysis only needs
four functions. ``scipy.stats`` evaluates them with exactly these ``scipy.special``
kernels (``scipy/stats/_continuous_distns.py``: ``t_gen._sf`` = ``stdtr(df, -x)``,
``t_gen._ppf`` = ``stdtrit(df, q)``, ``f_gen._sf`` = ``fdtrc(dfn, dfd, x)``,
``_norm_ppf`` = ``ndtri(q)``), wrapped by ``rv_continuous.sf`` / ``.ppf``
(``_distn_infrastructure.py``) which this module reproduces:

- a shape parameter that is not > 0 (NaN included) → NaN;
- ``sf``: NaN x → NaN; x at or below the support's lower end (−∞ for t, ≤ 0 for F) → 1;
  x = +∞ → 0; the kernel only on the open support;
- ``ppf``: q = 0 → the lower end (−∞), q = 1 → +∞, q outside [0, 1] or NaN → NaN;
- df = +∞ is a valid shape and goes to the kernel (``stdtr``/``stdtrit`` give the normal
  limit; ``fdtrc`` returns NaN for an infinite dfd, as ``scipy.stats.f.sf`` does).

So results are bitwise those of ``scipy.stats`` (tests/analysis/stats/test_dist.py).
Arrays or scalars in (broadcast together); an array of the broadcast shape out, or a
``numpy.float64`` for scalar inputs, as ``scipy.stats`` returns.

Reference: Abramowitz & Stegun (1964), 26.5.27 (t via the regularised incomplete beta
function) and 26.6.2 (F); Cephes (Moshier 1989) ``stdtr``, ``fdtrc``, ``ndtri``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

Kernel = Callable[..., np.ndarray]  # kernel(*shapes, value), on flat float64 arrays
Mask = Callable[[np.ndarray], np.ndarray]
End = tuple[Mask, float]  # where a value sits at an end of the support, and the result there


def _evaluate(values: ArrayLike, shapes: tuple[ArrayLike, ...], kernel: Kernel,
              inside: Mask, ends: tuple[End, ...]) -> np.ndarray:
    """``kernel(*shapes, v)`` where ``inside(v)`` holds and every shape is > 0, each end's
    fill where its mask holds (shapes valid), NaN elsewhere; evaluated on the selected
    elements only, as scipy's ``argsreduce`` does."""
    v, *s = np.broadcast_arrays(np.asarray(values, dtype=np.float64),
                                *(np.asarray(a, dtype=np.float64) for a in shapes))
    out = np.full(v.shape, np.nan)
    with np.errstate(invalid="ignore"):  # NaN compares False: it stays NaN
        valid = np.logical_and.reduce([a > 0 for a in s]) if s else np.ones(v.shape, bool)
        for where, fill in ends:
            out[valid & where(v)] = fill
        mask = valid & inside(v)
    if mask.any():
        out[mask] = kernel(*(a[mask] for a in s), v[mask])
    return out[()] if out.ndim == 0 else out


def _open_unit(q: np.ndarray) -> np.ndarray:
    return (q > 0) & (q < 1)


def _is_zero(q: np.ndarray) -> np.ndarray:
    return q == 0


def _is_one(q: np.ndarray) -> np.ndarray:
    return q == 1


def _is_inf(x: np.ndarray) -> np.ndarray:
    return x == np.inf


def _t_kernel(df: np.ndarray, x: np.ndarray) -> np.ndarray:
    return special.stdtr(df, -x)


def _t_quantile(df: np.ndarray, q: np.ndarray) -> np.ndarray:
    # scipy returns ``_ppf(q)·scale + loc``: + 0.0 gives its sign of zero (−0.0 → 0.0)
    return special.stdtrit(df, q) + 0.0


def _f_kernel(dfn: np.ndarray, dfd: np.ndarray, x: np.ndarray) -> np.ndarray:
    return special.fdtrc(dfn, dfd, x)


def _norm_quantile(q: np.ndarray) -> np.ndarray:
    return special.ndtri(q) + 0.0


_QUANTILE_ENDS: tuple[End, ...] = ((_is_zero, -np.inf), (_is_one, np.inf))


def t_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray:
    """Upper tail P(T > x) of Student's t with ``df`` degrees of freedom:
    ½·I_{df/(df+x²)}(df/2, ½) for x ≥ 0, I the regularised incomplete beta function, and
    1 − P(T > −x) for x < 0 (A&S 26.5.27); ``scipy.stats.t.sf(x, df)``, R
    ``pt(x, df, lower.tail = FALSE)``."""
    return _evaluate(x, (df,), _t_kernel, np.isfinite,
                     ((lambda v: v == -np.inf, 1.0), (_is_inf, 0.0)))


def t_ppf(q: ArrayLike, df: ArrayLike) -> np.ndarray:
    """Quantile t_{q,df}: the x with P(T ≤ x) = q; ``scipy.stats.t.ppf(q, df)``, R
    ``qt(q, df)``."""
    return _evaluate(q, (df,), _t_quantile, _open_unit, _QUANTILE_ENDS)


def f_sf(x: ArrayLike, dfn: ArrayLike, dfd: ArrayLike) -> np.ndarray:
    """Upper tail P(F > x) of Fisher's F(dfn, dfd): I_{dfd/(dfd+dfn·x)}(dfd/2, dfn/2) for
    x > 0, 1 for x ≤ 0 (A&S 26.6.2); ``scipy.stats.f.sf(x, dfn, dfd)``, R
    ``pf(x, dfn, dfd, lower.tail = FALSE)``."""
    return _evaluate(x, (dfn, dfd), _f_kernel, lambda v: (v > 0) & (v < np.inf),
                     ((lambda v: v <= 0, 1.0), (_is_inf, 0.0)))


def norm_ppf(q: ArrayLike) -> np.ndarray:
    """Standard normal quantile Φ⁻¹(q); ``scipy.stats.norm.ppf(q)``, R ``qnorm(q)``."""
    return _evaluate(q, (), _norm_quantile, _open_unit, _QUANTILE_ENDS)
