"""The mixed model's algebra once per group of cases with the same design
(stats/case_groups.py): equal to the dense per-case REML criterion and to one group per
case, for the deviance, its gradient and the Hessian; exact row grouping."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats.case_groups import CaseGroups, group_algebra, unique_rows
from eval_harness.analysis.stats.mixed import (
    CaseSums,
    Structure,
    blocks,
    deviance_and_gradient,
    gls,
    profiled_deviance,
)
from eval_harness.analysis.stats.model_terms import design_matrix
from eval_harness.analysis.stats.reml_hessian import vp_hessian

LEVELS = [("a1", "a2", "a3"), ("b1", "b2")]


def _frame(seed: int, n: int = 40, missing: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"case": i, "A": a, "B": b, "y": rng.normal() + 0.6 * rng.normal() * (a == "a1")}
            for i in range(n) for a, b in itertools.product(*LEVELS) if rng.random() > missing]
    return pd.DataFrame(rows)


def _sums(cm: pd.DataFrame) -> tuple[CaseSums, np.ndarray, dict[tuple[int, ...], np.ndarray]]:
    x, cols = design_matrix(cm, ["A", "B"], LEVELS)
    return CaseSums.from_rows(x, cm["y"].to_numpy(), cm["case"].to_numpy()), x, cols


def _structure(cols: dict[tuple[int, ...], np.ndarray]) -> Structure:
    return Structure((0, *cols[(0,)], *cols[(1,)]), (1, 2, 1))


def _dense_deviance(cm: pd.DataFrame, x: np.ndarray, st: Structure, theta: np.ndarray) -> float:
    """d(θ) from V_i = I + Z_i ΛΛᵀ Z_iᵀ formed and inverted case by case."""
    lam = st.factor(theta)
    y = cm["y"].to_numpy()
    codes = cm["case"].to_numpy()
    p = x.shape[1]
    xvx, xvy, yvy, logdet = np.zeros((p, p)), np.zeros(p), 0.0, 0.0
    for c in np.unique(codes):
        xi, yi = x[codes == c], y[codes == c]
        zi = xi[:, list(st.cols)]
        v = np.eye(len(yi)) + zi @ lam @ lam.T @ zi.T
        vinv = np.linalg.inv(v)
        logdet += np.linalg.slogdet(v)[1]
        xvx += xi.T @ vinv @ xi
        xvy += xi.T @ vinv @ yi
        yvy += yi @ vinv @ yi
    beta = np.linalg.solve(xvx, xvy)
    r2 = yvy - beta @ xvy
    dof = len(y) - p
    return float(logdet + np.linalg.slogdet(xvx)[1] + dof * (1 + np.log(2 * np.pi * r2 / dof)))


def _one_group_per_case(s: CaseSums) -> CaseSums:
    """The same sums with every case its own group (the per-case algebra)."""
    ones = CaseGroups(s.xtx, np.ones(s.n_cases), np.arange(s.n_cases), s.xty,
                      float(s.yty.sum()), (), np.arange(s.n_cases))
    out = CaseSums(s.xtx, s.xty, s.yty, s.n_obs, s.n_cases)
    out.__dict__["groups"] = ones
    return out


def test_groups_are_fewer_than_cases_and_the_deviance_equals_the_dense_one() -> None:
    cm = _frame(1)
    s, x, cols = _sums(cm)
    st = _structure(cols)
    assert len(s.groups.count) < s.n_cases / 2  # 40 cases, few missing patterns
    assert s.groups.count.sum() == s.n_cases
    for seed in range(3):
        theta = np.random.default_rng(seed).uniform(0.1, 1.2, st.n_theta())
        theta[2] *= -1.0  # an off-diagonal entry may be negative
        assert profiled_deviance(s, st, theta) == pytest.approx(
            _dense_deviance(cm, x, st, theta), rel=1e-12)


def test_grouped_gradient_and_hessian_equal_the_per_case_ones() -> None:
    s, _, cols = _sums(_frame(2, n=120))
    assert s.groups.big and len(s.groups.small)  # both paths of `CaseGroups.matvec`
    single = _one_group_per_case(s)
    st = _structure(cols)
    theta = np.array([0.7, 0.4, -0.2, 0.5, 0.9])
    d_g, grad_g = deviance_and_gradient(s, st, theta)
    d_c, grad_c = deviance_and_gradient(single, st, theta)
    assert d_g == pytest.approx(d_c, rel=1e-13)
    np.testing.assert_allclose(grad_g, grad_c, rtol=1e-10, atol=1e-12)
    e = group_algebra(s.groups, list(st.cols), st.factor(theta))
    h_g, jac_g = vp_hessian(s, st, e, gls(e), 0.8)
    per_case = blocks(s, st, theta)  # expanded to every case: the per-case code path
    h_c, jac_c = vp_hessian(s, st, per_case, gls(per_case), 0.8)
    np.testing.assert_allclose(h_g, h_c, rtol=1e-10, atol=1e-10)
    for a, b in zip(jac_g, jac_c, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_per_case_blocks_equal_the_woodbury_identity_case_by_case() -> None:
    cm = _frame(3, n=12)
    s, x, cols = _sums(cm)
    st = _structure(cols)
    theta = np.array([0.5, 0.3, 0.1, 0.6, 0.2])
    e = blocks(s, st, theta)
    lam = st.factor(theta)
    codes, y = cm["case"].to_numpy(), cm["y"].to_numpy()
    for c in range(s.n_cases):
        xi, yi = x[codes == c], y[codes == c]
        zi = xi[:, list(st.cols)]
        wi = np.linalg.inv(np.eye(len(yi)) + zi @ lam @ lam.T @ zi.T)
        np.testing.assert_allclose(e.a[c], zi.T @ wi @ zi, atol=1e-12)
        np.testing.assert_allclose(e.b[c], zi.T @ wi @ xi, atol=1e-12)
        np.testing.assert_allclose(e.c[c], zi.T @ wi @ yi, atol=1e-12)


def test_case_sums_from_distinct_rows_equal_the_per_row_outer_products() -> None:
    cm = _frame(4)
    x, _ = design_matrix(cm, ["A", "B"], LEVELS)
    y, codes = cm["y"].to_numpy(), cm["case"].to_numpy()
    s = CaseSums.from_rows(x, y, codes)
    # a covariate column makes every row distinct: the per-row branch
    xc = np.column_stack([x, np.random.default_rng(0).normal(size=len(y))])
    sc = CaseSums.from_rows(xc, y, codes)
    n = s.n_cases
    want_xtx = np.zeros((n, xc.shape[1], xc.shape[1]))
    np.add.at(want_xtx, codes, xc[:, :, None] * xc[:, None, :])
    want_xty = np.zeros((n, xc.shape[1]))
    np.add.at(want_xty, codes, xc * y[:, None])
    np.testing.assert_allclose(sc.xtx, want_xtx, rtol=1e-13)
    np.testing.assert_allclose(sc.xty, want_xty, rtol=1e-13)
    p = x.shape[1]
    np.testing.assert_array_equal(s.xtx, want_xtx[:, :p, :p])  # integer sums: exact
    np.testing.assert_allclose(s.xty, want_xty[:, :p], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s.yty, np.bincount(codes, weights=y * y))


@pytest.mark.parametrize("weights", [None, np.ones(2)])
def test_unique_rows_compares_rows_exactly(weights: np.ndarray | None) -> None:
    # with weights of ones [1, 0] and [0, 1] project alike: the exact sort decides
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [2.0, -1.0], [0.0, 1.0]])
    first, inverse, counts = unique_rows(a, weights)
    assert np.array_equal(a[first][inverse], a)
    assert sorted(counts.tolist()) == [1, 2, 2]
    assert len(first) == 3


def test_grouping_does_not_change_the_fit() -> None:
    from eval_harness.analysis.stats.mixed_fit import fit_mixed

    s, _, cols = _sums(_frame(5, n=30))
    st = _structure(cols)
    grouped = fit_mixed(s, st)
    single = fit_mixed(_one_group_per_case(s), st)
    assert grouped.deviance == pytest.approx(single.deviance, rel=1e-10)
    np.testing.assert_allclose(grouped.beta, single.beta, rtol=1e-6, atol=1e-8)
