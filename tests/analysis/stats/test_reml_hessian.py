"""The analytic Hessian of the REML deviance in (θ, σ) and the Jacobian of Cov(β̂)
(stats/reml_hessian.py) against central differences, one correlated block, a block per term
and `||`, interior and boundary θ; the Hessian of the criterion profiled over σ against
differences of its gradient."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats.mixed import (
    CaseSums,
    Structure,
    blocks,
    deviance_and_gradient,
    gls,
)
from eval_harness.analysis.stats.model_terms import design_matrix
from eval_harness.analysis.stats.reml_hessian import profiled_hessian, vp_hessian


def _sums(seed: int) -> tuple[CaseSums, dict[tuple[int, ...], np.ndarray]]:
    rng = np.random.default_rng(seed)
    levels = [("a1", "a2", "a3"), ("b1", "b2")]
    cells = list(itertools.product(*levels))
    rows = [{"case": i, "A": a, "B": b, "y": rng.normal() + 0.5 * rng.normal() * (a == "a1")}
            for i in range(15) for a, b in cells if rng.random() > 0.2]
    cm = pd.DataFrame(rows)
    x, cols = design_matrix(cm, ["A", "B"], levels)
    return CaseSums.from_rows(x, cm["y"].to_numpy(), cm["case"].to_numpy()), cols


def _vp_deviance(s: CaseSums, st: Structure, phi: np.ndarray) -> float:
    theta, sigma = phi[:-1], float(phi[-1])
    e = blocks(s, st, theta)
    g = gls(e)
    dof = s.n_obs - e.xwx.shape[0]
    return e.logdet_m + g.logdet_x + g.rss / sigma**2 + dof * np.log(2 * np.pi * sigma**2)


@pytest.mark.parametrize("pattern", [(4,), (1, 2, 1), (1, 1, 1, 1)])
@pytest.mark.parametrize("boundary", [False, True])
def test_hessian_and_jacobian_equal_central_differences(pattern: tuple[int, ...],
                                                        boundary: bool) -> None:
    s, cols = _sums(3)
    st = Structure((0, *cols[(0,)], *cols[(1,)]), pattern)
    theta = np.linspace(0.3, 0.9, st.n_theta()) * np.where(np.isfinite(st.lower_bounds()), 1, -0.5)
    if boundary:
        theta[0] = 0.0  # an intercept variance on its bound: the Hessian is still D's
    sigma = 0.8
    e = blocks(s, st, theta)
    h, grads = vp_hessian(s, st, e, gls(e), sigma)
    phi = np.concatenate([theta, [sigma]])
    step = 1e-4
    num = np.zeros_like(h)
    for i, j in itertools.product(range(phi.size), repeat=2):
        ei, ej = np.eye(phi.size)[i] * step, np.eye(phi.size)[j] * step
        num[i, j] = (_vp_deviance(s, st, phi + ei + ej) - _vp_deviance(s, st, phi + ei - ej)
                     - _vp_deviance(s, st, phi - ei + ej) + _vp_deviance(s, st, phi - ei - ej)
                     ) / (4 * step * step)
    assert np.abs(h - num).max() < 1e-5 * max(1.0, np.abs(h).max())
    for k in range(theta.size):
        ek = np.eye(theta.size)[k] * step

        def cov(t: np.ndarray) -> np.ndarray:
            return sigma**2 * gls(blocks(s, st, t)).cinv

        num_k = (cov(theta + ek) - cov(theta - ek)) / (2 * step)
        assert np.abs(grads[k] - num_k).max() < 1e-7
    assert np.allclose(grads[-1], 2 * sigma * gls(e).cinv)


@pytest.mark.parametrize("pattern", [(4,), (1, 2, 1), (1, 1, 1, 1)])
def test_profiled_hessian_equals_central_differences_of_the_gradient(
        pattern: tuple[int, ...]) -> None:
    # the Newton steps of the optimiser: ∇²d(θ), d profiled over σ
    s, cols = _sums(4)
    st = Structure((0, *cols[(0,)], *cols[(1,)]), pattern)
    theta = np.linspace(0.2, 1.1, st.n_theta()) * np.where(np.isfinite(st.lower_bounds()), 1, -0.7)
    h = profiled_hessian(s, st, theta)
    step = 1e-6
    num = np.array([(deviance_and_gradient(s, st, theta + step * e)[1]
                     - deviance_and_gradient(s, st, theta - step * e)[1]) / (2 * step)
                    for e in np.eye(theta.size)])
    assert np.abs(h - num).max() < 1e-6 * max(1.0, np.abs(h).max())
