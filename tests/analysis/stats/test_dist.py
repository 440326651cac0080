"""The scipy.special-only t, F and normal functions equal scipy.stats bitwise (same kernels,
same edge-case handling), and reproduce textbook / R values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy import stats

from eval_harness.analysis.stats.dist import f_sf, norm_ppf, t_ppf, t_sf

RNG = np.random.default_rng(20260730)
# edge cases first: bad shapes (≤ 0, NaN) give NaN, df = ∞ is the normal limit
DFS = np.array([-1.0, 0.0, np.nan, np.inf, 0.3, 1.0, 2.0, 2.5, 7.0, 33.0, 1e3, 1e7])
XS = np.concatenate([[-np.inf, np.inf, np.nan, 0.0, -0.0, 1e-300, -1e300, 40.0, -40.0],
                     RNG.normal(scale=3.0, size=40)])
QS = np.concatenate([[0.0, 1.0, -0.1, 1.1, np.nan, 0.5, 1e-300, 1e-12, 1 - 1e-16, 0.975],
                     RNG.uniform(size=40)])


def _scipy(fn, *args):  # scipy.stats warns on some invalid inputs; we only compare values
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def test_t_sf_equals_scipy_on_a_grid() -> None:
    x, df = np.meshgrid(XS, DFS)
    assert_array_equal(t_sf(x, df), _scipy(stats.t.sf, x, df))


def test_t_ppf_equals_scipy_on_a_grid() -> None:
    q, df = np.meshgrid(QS, DFS)
    assert_array_equal(t_ppf(q, df), _scipy(stats.t.ppf, q, df))


def test_f_sf_equals_scipy_on_a_grid() -> None:
    x = np.concatenate([XS, np.abs(XS[9:]) ** 2])  # F lives on x > 0: add positive values
    x, dfn, dfd = np.meshgrid(x, DFS, DFS, indexing="ij")
    assert_array_equal(f_sf(x, dfn, dfd), _scipy(stats.f.sf, x, dfn, dfd))


def test_norm_ppf_equals_scipy_on_a_grid() -> None:
    assert_array_equal(norm_ppf(QS), _scipy(stats.norm.ppf, QS))


def test_edge_cases_explicitly() -> None:
    assert_array_equal(t_sf([-np.inf, np.inf, np.nan, 0.0], 5.0), [1.0, 0.0, np.nan, 0.5])
    assert_array_equal(t_sf(1.0, [0.0, -2.0, np.nan]), [np.nan] * 3)
    # df = ∞: the normal limit (stdtr's own branch: equal to ndtr within 2 ulp, not bitwise)
    assert t_sf(1.5, np.inf) == stats.t.sf(1.5, np.inf)
    assert t_sf(1.5, np.inf) == pytest.approx(stats.norm.sf(1.5), rel=1e-15)
    assert_array_equal(t_ppf([0.0, 1.0, -0.5, 1.5, np.nan], 4.0),
                       [-np.inf, np.inf, np.nan, np.nan, np.nan])
    assert_array_equal(f_sf([-1.0, 0.0, np.inf, np.nan], 2.0, 3.0), [1.0, 1.0, 0.0, np.nan])
    assert_array_equal(f_sf(2.0, [0.0, 2.0, np.nan], [2.0, -1.0, 2.0]), [np.nan] * 3)
    assert_array_equal(norm_ppf([0.0, 1.0, -1e-9, 2.0]), [-np.inf, np.inf, np.nan, np.nan])


def test_shapes_and_types_follow_scipy() -> None:
    assert isinstance(t_sf(1.0, 3), np.float64) and np.ndim(t_sf(1.0, 3)) == 0
    assert isinstance(norm_ppf(0.3), np.float64)
    assert t_ppf(np.full((2, 3), 0.9), [1.0, 2.0, 3.0]).shape == (2, 3)
    assert f_sf([[1.0], [2.0]], [1.0, 2.0, 4.0], 9).shape == (2, 3)
    assert t_sf(np.array([], dtype=float), 3.0).shape == (0,)
    assert t_sf(np.array([1, 2]), 3).dtype == np.float64  # integers in, floats out


def test_textbook_values() -> None:
    # R 4.2.2 (Debian): print(qt(0.975, 10), digits = 16) → 2.228138851986274
    assert t_ppf(0.975, 10) == pytest.approx(2.228138851986274, rel=1e-15)
    # R: print(qnorm(0.975), digits = 16) → 1.959963984540054
    assert norm_ppf(0.975) == pytest.approx(1.959963984540054, rel=1e-15)
    # R: print(pf(4, 2, 10, lower.tail = FALSE), digits = 16) → 0.05292214940134465; for
    # dfn = 2 the tail is closed-form,
    # (1 + dfn·x/dfd)^(−dfd/2) = 1.8^−5 = 0.052922149401344...
    assert f_sf(4, 2, 10) == pytest.approx(1.8 ** -5, rel=1e-14)
    assert f_sf(4, 2, 10) == pytest.approx(0.05292214940134465, rel=1e-15)
    # Cauchy (df = 1): R pt(1, 1, lower.tail = FALSE) → 0.2499999999999998 (exact 0.25),
    # qt(0.75, 1) → 1
    assert t_sf(1.0, 1) == pytest.approx(0.25, rel=1e-15)
    assert t_ppf(0.75, 1) == pytest.approx(1.0, rel=1e-15)
    # df = 2: P(T > x) = ½ − x / (2·√(2 + x²)); x = 1 → ½ − 1/(2√3);
    # R: print(pt(1, 2, lower.tail = FALSE), digits = 16) → 0.2113248654051871
    assert t_sf(1.0, 2) == pytest.approx(0.5 - 1 / (2 * math.sqrt(3)), rel=1e-14)
    assert t_sf(1.0, 2) == pytest.approx(0.2113248654051871, rel=1e-15)
    # two-sided p of t = 2.228138851986274 on 10 df is 0.05 (round trip)
    assert 2 * t_sf(2.228138851986274, 10) == pytest.approx(0.05, rel=1e-12)
