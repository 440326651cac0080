"""The REML optimiser of the mixed model (stats/mixed_fit.py `_optimise`, `_newton`): the
optimum BFGS reaches, in few evaluations, converged far enough that the Satterthwaite df
do not depend on where on the likelihood ridge it ends."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from eval_harness.analysis.stats import mixed, mixed_fit
from eval_harness.analysis.stats.design import term_subsets
from eval_harness.analysis.stats.mixed import CaseSums, Structure, deviance_and_gradient
from eval_harness.analysis.stats.mixed_fit import fit_at
from eval_harness.analysis.stats.model_terms import design_matrix
from eval_harness.analysis.stats.reml import wald_term
from eval_harness.analysis.stats.slopes import term_hypothesis

DATA = Path(__file__).parent / "data"
FACTORS = {"u2x2_slopes": ["A", "B"], "u3x2": ["A", "B"], "u2x2x2": ["A", "B", "C"],
           "u2x2_nocase": ["A", "B"]}


def _design(name: str) -> tuple[CaseSums, Structure]:
    d = pd.read_csv(DATA / f"{name}.csv")
    factors = FACTORS[name]
    levels = [tuple(sorted(d[f].unique())) for f in factors]
    x, cols = design_matrix(d, factors, levels)
    s = CaseSums.from_rows(x, d["value"].to_numpy(float), pd.factorize(d["case_id"])[0])
    terms = term_subsets(len(factors))
    return s, mixed.slope_structure([list(cols[t]) for t in terms], False)


@pytest.mark.parametrize("name", list(FACTORS))
def test_the_optimum_is_at_least_bfgs_s_in_few_evaluations(name: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    s, st = _design(name)
    ref = optimize.minimize(lambda t: deviance_and_gradient(s, st, t), st.start(), jac=True,
                            method="BFGS", options={"gtol": 1e-10, "maxiter": 20000})
    calls = []

    def counted(*args: object) -> tuple[float, np.ndarray]:
        calls.append(1)
        return deviance_and_gradient(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mixed_fit, "deviance_and_gradient", counted)
    theta, dev = mixed_fit._optimise(s, st)
    assert dev <= ref.fun + 1e-10 * abs(ref.fun)
    assert np.abs(deviance_and_gradient(s, st, theta)[1]).max() < 1e-6
    assert len(calls) < 80  # BFGS from the same starts: 150–400


def _ridge_data(seed: int, n: int = 30) -> pd.DataFrame:
    """2 × 2 cell means with case slopes, 20 % missing: the maximal structure spans the
    cells, so the residual lies on a ridge of the likelihood (re_rule step 1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        u, sa, sb = rng.normal(0, 1.0), rng.normal(0, 0.6), rng.normal(0, 0.3)
        for a, b in itertools.product((1, -1), (1, -1)):
            if rng.random() > 0.2:
                rows.append({"case": i, "A": f"a{a}", "B": f"b{b}",
                             "y": u + sa * a + sb * b + 0.3 * a + rng.normal(0, 0.5)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_f_and_df_do_not_depend_on_the_point_of_the_ridge(seed: int) -> None:
    d = _ridge_data(seed)
    levels = [("a-1", "a1"), ("b-1", "b1")]
    x, cols = design_matrix(d, ["A", "B"], levels)
    s = CaseSums.from_rows(x, d["y"].to_numpy(), d["case"].to_numpy())
    st = mixed.slope_structure([list(cols[t]) for t in term_subsets(2)], False)
    results = []
    for scale in (1.0, 0.2, 3.0):  # three starts: three ends on the ridge
        theta, dev = mixed_fit._optimise(s, st, warm=scale * st.start())
        fit = fit_at(s, st, theta, dev)
        results.append([wald_term(fit, term_hypothesis(levels, t, cols[t], x))
                        for t in term_subsets(2)])
    ends = np.array(results)  # (start, term, (F, df))
    np.testing.assert_allclose(ends, np.broadcast_to(ends[0], ends.shape), rtol=1e-8)
