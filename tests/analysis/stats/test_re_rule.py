"""The random-effects structure rule (stats/re_rule.py): the choice and the tests do not
depend on the order of factors or levels, nothing is dropped by its name, saturated fits
are excluded with a reason."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats import anova_frame
from eval_harness.analysis.stats.mixed import CaseSums

LAMBDA = {"a1": -1.0, "a2": 0.2, "a3": 0.8}  # rank-1 case × level pattern of A


def _data(seed: int, n: int = 20, missing: float = 0.2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        u, d, b = rng.normal(size=3)
        for a, bb in itertools.product(LAMBDA, ("b1", "b2")):
            if rng.random() < missing:
                continue
            y = u + d * LAMBDA[a] + b * (1 if bb == "b1" else -1) + rng.normal(0, 0.5)
            rows.append({"case_id": f"c{i}", "A": a, "B": bb, "value": y})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", [1, 2])
def test_choice_and_tests_do_not_depend_on_factor_or_level_order(seed: int) -> None:
    # the old rule: `||` dropped a 3-level slope term when one sum-coded column (which
    # one depends on the level order) had zero variance, and N ≤ cases × q dropped the
    # *last* slope term (which one depends on the factor order)
    d = _data(seed)
    base, _ = anova_frame(d, ["A", "B"], method="mixed",
                          levels={"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]})
    for factors, levels in ((["B", "A"], {"A": ["a3", "a1", "a2"], "B": ["b2", "b1"]}),
                            (["A", "B"], {"A": ["a2", "a3", "a1"], "B": ["b1", "b2"]})):
        other, _ = anova_frame(d, factors, method="mixed", levels=levels)
        assert other.model.fit.deviance == pytest.approx(base.model.fit.deviance, rel=1e-9)
        for term, ref in base.terms.items():
            got = other.terms[term if term != "A:B" or factors[0] == "A" else "B:A"]
            assert pytest.approx(ref.F, rel=1e-6) == got.F
            if ref.df_num == 1:  # a multi-df term's Satterthwaite df depends on the basis of
                # its hypothesis (lmerTest's type-3 contrasts: each level against the first)
                assert got.df_den == pytest.approx(ref.df_den, rel=1e-6)
                assert got.p_raw == pytest.approx(ref.p_raw, rel=1e-6)
    assert len(base.model.slopes) >= 2  # A and B keep their case-level variances


def test_a_saturated_fit_is_excluded_with_a_reason_not_tested() -> None:
    # 2×2, 2 cases, one cell missing: 3 residual df for 4 identified variance parameters;
    # the old rule reported σ̂² ≈ 4e-11 and F ≈ 10⁷
    rng = np.random.default_rng(4)
    cells = list(itertools.product(("a1", "a2"), ("b1", "b2")))
    rows = [{"case_id": f"c{i}", "A": a, "B": b, "value": float(rng.normal())}
            for i in range(2) for a, b in cells][1:]
    res, _ = anova_frame(pd.DataFrame(rows), ["A", "B"], method="auto",
                         levels={"A": ["a1", "a2"], "B": ["b1", "b2"]})
    assert res.method == "mixed" and res.terms == {}
    assert {e.term for e in res.excluded_terms} == {"A", "B", "A:B"}
    assert all(e.reason.startswith("saturated") for e in res.excluded_terms)


def _interpolated() -> pd.DataFrame:
    """2×2, 12 cases, each but the first missing one cell: under the classical structure
    (intercept, A, B slopes) every incomplete case is fitted exactly by its own effects."""
    rng = np.random.default_rng(0)
    cells = list(itertools.product(("a1", "a2"), ("b1", "b2")))
    rows = []
    for i in range(12):
        drop = rng.integers(4) if i > 0 else -1
        u, sa, sb = rng.normal(size=3)
        rows += [{"case_id": f"c{i}", "A": a, "B": b,
                  "value": u + sa * (a == "a1") + sb * (b == "b1") + 0.3 * rng.normal()}
                 for k, (a, b) in enumerate(cells) if k != drop]
    return pd.DataFrame(rows)


def test_random_effects_that_interpolate_the_data_are_saturated_not_tested() -> None:
    # σ² → 0 leaves the REML criterion bounded: σ̂² is where the optimiser stopped on a
    # flat asymptote (main before this rule: A:B p = 0.0 from σ̂² ≈ 1e-7 · var(y))
    from eval_harness.analysis.stats.mixed import fit_at, profiled_deviance
    from eval_harness.analysis.stats.re_rule import saturation
    from eval_harness.analysis.stats.slopes import design_rows, fit_slopes_model

    d = _interpolated()
    levels = {"A": ["a1", "a2"], "B": ["b1", "b2"]}
    res, _ = anova_frame(d, ["A", "B"], method="auto", levels=levels)
    assert res.method == "mixed" and res.terms == {}
    assert {e.term for e in res.excluded_terms} == {"A", "B", "A:B"}
    assert all("fit the data exactly as σ² → 0" in e.reason for e in res.excluded_terms)
    model = fit_slopes_model(d, ["A", "B"], list(levels.values()), "value", "case_id")
    fit = model.fit
    assert len(model.slopes) == 2 and model.saturated  # the classical structure
    x_cells = design_rows(["A", "B"], [tuple(v) for v in levels.values()])
    sums = _sums(d, levels)
    for scale in (1.0, 30.0):  # anywhere on the asymptote: the same verdict
        theta = fit.theta * scale
        far = fit_at(sums, fit.structure, theta, profiled_deviance(sums, fit.structure, theta),
                     with_df=False)
        assert saturation(sums, far, float(np.var(d["value"], ddof=1)), x_cells) is not None


def _sums(d: pd.DataFrame, levels: dict[str, list[str]]) -> CaseSums:
    from eval_harness.analysis.stats.frame import design_matrix

    x, _ = design_matrix(d, list(levels), [tuple(v) for v in levels.values()])
    return CaseSums.from_rows(x, d["value"].to_numpy(float), pd.factorize(d["case_id"])[0])


def test_a_fit_that_does_not_interpolate_is_not_saturated() -> None:
    res, _ = anova_frame(_data(1), ["A", "B"], method="mixed",
                         levels={"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]})
    assert res.model.saturated is None and set(res.terms) == {"A", "B", "A:B"}
