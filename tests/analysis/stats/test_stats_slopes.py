"""The random-slopes model (method `mixed`): agreement with rm on complete data, the
structure rule, boundary fits, degenerate data, contrasts from the fit.
(R reference values: test_stats_mixed_r.py.)"""

from __future__ import annotations

import contextlib
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats import anova_frame
from eval_harness.analysis.stats.slopes import model_contrasts

AB = {"A": ["a1", "a2"], "B": ["b1", "b2"]}
ABC = {**AB, "C": ["c1", "c2"]}


def _data(levels: dict[str, list[str]], n: int, seed: int, *, case_sd: float = 1.0,
          slope_sd: float = 0.7, noise: float = 0.5, missing: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cells = list(itertools.product(*levels.values()))
    slopes = rng.normal(0, slope_sd, (n, len(levels)))
    rows = []
    for i in range(n):
        u = rng.normal(0, case_sd)
        for c in cells:
            code = np.array([1.0 if c[j] == levels[f][0] else -1.0 for j, f in enumerate(levels)])
            rows.append({"case_id": f"c{i}", **dict(zip(levels, c, strict=True)),
                         "value": u + code @ slopes[i] + rng.normal(0, noise)})
    d = pd.DataFrame(rows)
    if missing:
        d = d.drop(index=rng.choice(len(d), round(missing * len(d)), replace=False))
    return d


def _fit(d: pd.DataFrame, levels: dict[str, list[str]], method: str = "mixed",
         ddf: str = "kenward-roger"):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res, dropped = anova_frame(d, list(levels), method=method, levels=levels, ddf=ddf)
    for t in res.terms.values():
        assert math.isfinite(t.F) and math.isfinite(t.p_raw) and t.df_den > 0
    return res, dropped


@pytest.mark.parametrize("ddf", ["kenward-roger", "satterthwaite"])
@pytest.mark.parametrize(("levels", "seed"), [(AB, 0), (AB, 1), (ABC, 1)])
def test_complete_two_level_designs_equal_rm(levels: dict[str, list[str]], seed: int,
                                             ddf: str) -> None:
    # Complete, balanced, 2-level factors, no variance at the boundary: every term × case
    # stratum is estimated by its own mean square, so the F and df are the rm F and
    # df(n − 1) exactly (GG ε = 1 for 1-df terms), under Satterthwaite and under
    # Kenward–Roger (exact for balanced designs, Kenward & Roger 1997); measured ~1e-9.
    d = _data(levels, 16, seed)
    rm, _ = _fit(d, levels, "rm")
    mixed, dropped = _fit(d, levels, ddf=ddf)
    assert not mixed.model.fit.singular and dropped == []
    for t, ref in rm.terms.items():
        got = mixed.terms[t]
        assert pytest.approx(ref.F, rel=1e-6) == got.F
        assert got.df_den == pytest.approx(ref.df_den, rel=1e-6)
        assert got.p_raw == pytest.approx(ref.p_raw, rel=1e-6)


def test_auto_uses_rm_when_complete_and_mixed_when_not() -> None:
    d = _data(AB, 12, 3)
    assert _fit(d, AB, "auto")[0].method == "rm"
    res, dropped = _fit(d.iloc[1:], AB, "auto")
    assert res.method == "mixed" and dropped == [] and res.n_cases == 12


def test_no_slope_is_dropped_when_random_effects_outnumber_observations() -> None:
    # 2×2, 12 cases, 35% of cells missing: N = 31 < 12 cases × 3 random effects; the old
    # rule dropped the last slope term (B), so B lost its variance because of its name
    res, _ = _fit(_data(AB, 12, 4, missing=0.35), AB)
    assert {":".join("AB"[j] for j in s) for s in res.model.slopes} >= {"A", "B"}
    assert set(res.terms) == {"A", "B", "A:B"}


@pytest.mark.parametrize("seed", range(4))
def test_zero_variances_are_fits_not_crashes(seed: int) -> None:
    # no case intercepts, no slopes: every term × case stratum is the noise alone
    d = _data(AB, 14, 10 + seed, case_sd=0.0, slope_sd=0.0, missing=0.2)
    res, _ = _fit(d, AB)
    assert set(res.terms) == {"A", "B", "A:B"}
    assert any(n.startswith("random effects: y ~ A*B + (1 | case)") for n in res.notes)


def test_degenerate_data_is_excluded_with_a_reason() -> None:
    d = _data(AB, 6, 5)
    const = d.assign(value=2.0)
    assert all("constant" in e.reason for e in _fit(const, AB)[0].excluded_terms)
    one = d[d["case_id"] == "c0"]
    assert all("fewer than 2" in e.reason for e in _fit(one, AB)[0].excluded_terms)
    empty_cell = d[~((d["A"] == "a2") & (d["B"] == "b2"))]
    res, _ = _fit(empty_cell, {"A": ["a1", "a2"], "B": ["b1", "b2"]})
    assert res.terms == {} and all("not estimable" in e.reason for e in res.excluded_terms)


@pytest.mark.parametrize("method", ["mixed", "lmm"])
def test_contrasts_of_a_two_level_factor_match_the_omnibus_test(method: str) -> None:
    # issue 15: under --keep-incomplete the contrast used complete cases only and
    # contradicted the omnibus test; from the fitted model a 2-level contrast IS that test
    d = _data(AB, 20, 6, missing=0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res, _ = anova_frame(d, ["A", "B"], method=method, keep_incomplete=method == "lmm",
                             levels=AB)
    (pair,) = model_contrasts(res.model, "A")
    assert pair.t**2 == pytest.approx(res.terms["A"].F, rel=1e-9)
    assert pair.df == pytest.approx(res.terms["A"].df_den, rel=1e-9)
    assert pair.p_raw == pytest.approx(res.terms["A"].p_raw, rel=1e-9)


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_the_fit_runs_on_one_blas_thread_and_gives_the_same_results(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenBLAS threads cost more than they save on the fit's small per-case matrices: the
    # fit loop runs on one, the caller's setting is back afterwards, the numbers unchanged
    from threadpoolctl import threadpool_limits

    from eval_harness.analysis.stats import slopes

    inside: list[list[int]] = []
    real = slopes.fit_slopes_model

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        inside.append(_blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(slopes, "fit_slopes_model", spy)
    d = _data(ABC, 40, 5, missing=0.15)
    with threadpool_limits(limits=2, user_api="blas"):
        assert set(_blas_threads()) == {2}  # numpy's wheels bring OpenBLAS
        one, _ = _fit(d, ABC)
        assert set(_blas_threads()) == {2}
        monkeypatch.setattr(slopes, "threadpool_limits",
                            lambda **_: contextlib.nullcontext())
        two, _ = _fit(d, ABC)
    assert [set(n) for n in inside] == [{1}, {2}]
    assert one.terms.keys() == two.terms.keys() and one.terms
    for name, t in one.terms.items():
        u = two.terms[name]
        for a, b in ((t.F, u.F), (t.p_raw, u.p_raw), (t.df_den, u.df_den)):
            assert abs(a - b) <= 1e-12 * max(1.0, abs(b)), (name, a, b)
