"""Kenward–Roger df of the random-slopes mixed model (stats/kenward_roger.py) against
lmerTest / pbkrtest / emmeans, on the ridge, and against Hotelling's exact F.

Reference values: data/kr_reference.csv, written by r_reference/kenward_roger.R (R 4.2.2,
lme4 1.1.31, lmerTest 3.1.3, pbkrtest 0.5.2, emmeans 1.8.4.1) on the unbalanced designs of
data/u*.csv, one covariance block per term, for two structures: "classical" (every term's
slopes but the highest-order one: q < cells, every variance identified) and "full" (every
term's slopes, the structure re_rule picks on these designs: the residual on the
likelihood ridge, the information singular). Calls: terms — anova(fit, type = 3, ddf =
"Kenward-Roger"); contrasts — summary(emmeans(fit, pairwise ~ F, lmer.df =
"kenward-roger")$contrasts, infer = TRUE, adjust = "none"). lmerControl as
random_slopes.R (nloptwrap, xtol_abs = 1e-12, ftol_abs = 1e-14).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats import anova_frame
from eval_harness.analysis.stats.design import term_subsets
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.kenward_roger import adjust, kr_contrast, kr_term
from eval_harness.analysis.stats.mixed import CaseSums, slope_structure
from eval_harness.analysis.stats.mixed_fit import fit_mixed
from eval_harness.analysis.stats.model_terms import design_matrix
from eval_harness.analysis.stats.slopes import (
    canonical_ddf,
    design_rows,
    model_contrasts,
    term_hypothesis,
)

DATA = Path(__file__).parent / "data"
REF = pd.read_csv(DATA / "kr_reference.csv")
FACTORS = {"u2x2_slopes": ["A", "B"], "u2x2_noslope": ["A", "B"], "u3x2": ["A", "B"],
           "u2x2x2": ["A", "B", "C"], "u4": ["A"]}
TOL = 1e-6


def _setup(name: str) -> tuple[pd.DataFrame, list[tuple[str, ...]], np.ndarray, dict, CaseSums]:
    d = pd.read_csv(DATA / f"{name}.csv")
    factors = FACTORS[name]
    levels = [tuple(sorted(d[f].unique())) for f in factors]
    x, cols = design_matrix(d, factors, levels)
    sums = CaseSums.from_rows(x, d["value"].to_numpy(float), pd.factorize(d["case_id"])[0])
    return d, levels, x, cols, sums


def _classical(name: str):
    """Our fit of the classical structure (no highest-order slope), its KR and design."""
    _, levels, x, cols, sums = _setup(name)
    k = len(FACTORS[name])
    slopes = [t for t in term_subsets(k) if len(t) < k]
    st = slope_structure([list(cols[t]) for t in slopes], False)
    fit = fit_mixed(sums, st, with_df=False)
    return fit, adjust(sums, st, fit.theta), levels, x, cols


def _rows(name: str, structure: str, kind: str) -> pd.DataFrame:
    rows = REF[(REF.design == name) & (REF.structure == structure) & (REF.kind == kind)]
    assert len(rows)
    return rows


@pytest.mark.parametrize("name", list(FACTORS))
def test_classical_structure_terms_match_lmertest_kr(name: str) -> None:
    fit, kr, levels, x, cols = _classical(name)
    rows = _rows(name, "classical", "term")
    assert fit.deviance == pytest.approx(rows.reml.iloc[0], rel=1e-8)
    from eval_harness.analysis.stats.dist import f_sf

    for _, ref in rows.iterrows():
        subset = tuple(FACTORS[name].index(f) for f in ref.label.split(":"))
        f_val, ddf = kr_term(kr, term_hypothesis(levels, subset, cols[subset], x))
        assert f_val == pytest.approx(ref.F, rel=TOL)
        assert ddf == pytest.approx(ref.ddf, rel=TOL)
        assert float(f_sf(f_val, ref.ndf, ddf)) == pytest.approx(ref.p, rel=TOL)


@pytest.mark.parametrize("name", list(FACTORS))
def test_classical_structure_contrasts_match_emmeans_kr(name: str) -> None:
    _, kr, levels, _, _ = _classical(name)
    rows = _rows(name, "classical", "contrast")
    cells = design_rows(FACTORS[name], levels)
    grid = list(pd.MultiIndex.from_product(levels))
    for _, ref in rows.iterrows():
        a, b = ref.label.split(" - ")
        j = next(j for j, lv in enumerate(levels) if a in lv)
        mean = [cells[[g[j] == lev for g in grid]].mean(axis=0) for lev in (a, b)]
        vec = mean[0] - mean[1]
        var, df = kr_contrast(kr, vec)
        assert float(vec @ kr.beta) == pytest.approx(ref.estimate, rel=TOL, abs=1e-10)
        assert np.sqrt(var) == pytest.approx(ref.se, rel=TOL)
        assert df == pytest.approx(ref.ddf, rel=TOL)


@pytest.fixture(scope="module")
def default_fits() -> dict[str, object]:
    out = {}
    for name, factors in FACTORS.items():
        d = pd.read_csv(DATA / f"{name}.csv")
        res, _ = anova_frame(d, factors, method="mixed",
                             levels={f: sorted(d[f].unique()) for f in factors})
        out[name] = res
    return out


@pytest.mark.parametrize("name", list(FACTORS))
def test_default_mixed_is_kenward_roger_and_matches_lmertest(default_fits: dict,
                                                             name: str) -> None:
    # the rule picks the full structure on these designs (test_stats_mixed_r.py); R's
    # pbkrtest inverts the singular information with MASS::ginv, ours with pinv
    res = default_fits[name]
    assert "Kenward–Roger" in res.label and res.fit.endswith("Kenward–Roger df")
    rows = _rows(name, "full", "term")
    assert sorted(":".join(FACTORS[name][j] for j in s) for s in res.model.slopes) == sorted(
        rows.slopes.iloc[0].split())
    assert set(res.terms) == set(rows.label)
    for _, ref in rows.iterrows():
        got = res.terms[ref.label]
        assert pytest.approx(ref.F, rel=TOL) == got.F
        assert got.df_num == ref.ndf
        assert got.df_den == pytest.approx(ref.ddf, rel=TOL)
        assert got.p_raw == pytest.approx(ref.p, rel=TOL)


@pytest.mark.parametrize("name", list(FACTORS))
def test_default_contrasts_match_emmeans_kr(default_fits: dict, name: str) -> None:
    model = default_fits[name].model
    for _, ref in _rows(name, "full", "contrast").iterrows():
        a, b = ref.label.split(" - ")
        factor = next(f for f, lv in zip(model.factors, model.levels, strict=True) if a in lv)
        (got,) = [c for c in model_contrasts(model, factor, "none") if (c.a, c.b) == (a, b)]
        assert got.estimate == pytest.approx(ref.estimate, rel=TOL, abs=1e-10)
        assert got.se == pytest.approx(ref.se, rel=TOL)
        assert got.df == pytest.approx(ref.ddf, rel=TOL)
        assert got.p_raw == pytest.approx(ref.p, rel=TOL)


@pytest.mark.parametrize("name", ["u3x2", "u2x2x2"])
def test_two_points_on_the_ridge_give_equal_f_and_df(name: str) -> None:
    # σ² I = Z (σ²(X_cᵀX_c)⁻¹) Zᵀ: moving along the ridge, (σ², D) → (σ² s,
    # D/s − (1 − 1/s)(X_cᵀX_c)⁻¹), leaves V unchanged; the information is singular there
    _, levels, x, cols, sums = _setup(name)
    k = len(FACTORS[name])
    st = slope_structure([list(cols[t]) for t in term_subsets(k)], False)
    fit = fit_mixed(sums, st, with_df=False)
    z = design_rows(FACTORS[name], levels)[:, list(st.cols)]
    inv = np.linalg.inv(z.T @ z)
    lam = st.factor(fit.theta)
    d, s = lam @ lam.T, 1.0 + 0.3 * float(np.linalg.eigvals(z.T @ z @ lam @ lam.T).real.min())
    d2 = d / s - (1.0 - 1.0 / s) * inv
    other = np.zeros_like(d2)
    start = 0
    for b in st.blocks:
        sl = slice(start, start + b)
        other[sl, sl] = np.linalg.cholesky(d2[sl, sl])
        start += b
    theta2 = st.theta_of(other)
    assert not np.allclose(theta2, fit.theta)
    kr1, kr2 = adjust(sums, st, fit.theta), adjust(sums, st, theta2)
    assert kr2.sigma2 == pytest.approx(s * kr1.sigma2, rel=1e-9)
    assert np.linalg.matrix_rank(kr1.w) < len(kr1.w)  # the singular information
    for t in term_subsets(k):
        hyp = term_hypothesis(levels, t, cols[t], x)
        assert kr_term(kr2, hyp) == pytest.approx(kr_term(kr1, hyp), rel=1e-8)


def test_complete_one_factor_reproduces_hotelling_exact_f() -> None:
    # complete data, full model: the within-case contrasts have an unstructured covariance
    # and KR's F on (ℓ, n − ℓ) df is Hotelling's T² scaled, exact under normality
    rng = np.random.default_rng(7)
    n, k = 12, 3
    y = rng.normal(size=(n, 1)) + rng.normal(size=(n, k)) @ np.diag([1.0, 0.5, 2.0])
    d = pd.DataFrame({"case_id": np.repeat(np.arange(n), k), "A": np.tile(["a", "b", "c"], n),
                      "value": y.ravel()})
    levels = [("a", "b", "c")]
    x, cols = design_matrix(d, ["A"], levels)
    sums = CaseSums.from_rows(x, d["value"].to_numpy(), d["case_id"].to_numpy())
    st = slope_structure([list(cols[(0,)])], False)
    kr = adjust(sums, st, fit_mixed(sums, st, with_df=False).theta)
    f_val, ddf = kr_term(kr, term_hypothesis(levels, (0,), cols[(0,)], x))
    diffs = y[:, 1:] - y[:, :1]
    mean = diffs.mean(axis=0)
    t2 = n * mean @ np.linalg.solve(np.cov(diffs, rowvar=False), mean)
    ell = k - 1
    assert ddf == pytest.approx(n - ell, rel=1e-6)
    assert f_val == pytest.approx((n - ell) / (ell * (n - 1)) * t2, rel=1e-6)


def test_satterthwaite_stays_selectable() -> None:
    d = pd.read_csv(DATA / "u3x2.csv")
    levels = {f: sorted(d[f].unique()) for f in "AB"}
    kr, _ = anova_frame(d, ["A", "B"], method="mixed", levels=levels)
    sw, _ = anova_frame(d, ["A", "B"], method="mixed", levels=levels, ddf="Satterthwaite")
    assert "Satterthwaite" in sw.label and sw.model.kr is None and kr.model.kr is not None
    assert sw.terms["A"].df_den != pytest.approx(kr.terms["A"].df_den, rel=1e-3)
    assert canonical_ddf("KR") == canonical_ddf("Kenward_Roger") == "kenward-roger"
    with pytest.raises(StatsInputError, match="unknown ddf 'bogus'"):
        anova_frame(d, ["A", "B"], method="mixed", levels=levels, ddf="bogus")
