"""Degenerate designs: valid results with reasons, never a crash, a warning or an infinite F."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats import (
    StatsInputError,
    anova_balanced,
    anova_frame,
    canonical_correction,
    pairwise_contrasts,
)

LEVELS = [["a1", "a2", "a3"], ["b1", "b2"]]


def run(y: np.ndarray, method: str, levels: list[list[str]] = LEVELS):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = anova_balanced(y, ["A", "B"], levels, method=method)
        contrasts = pairwise_contrasts(y, ["A", "B"], levels, "A", method=method)
    for t in res.terms.values():
        assert math.isfinite(t.F) and math.isfinite(t.p_raw)
    return res, contrasts


@pytest.mark.parametrize("method", ["rm", "lmm"])
def test_everything_constant(method: str) -> None:
    res, contrasts = run(np.full((8, 3, 2), 0.7), method)
    assert res.terms == {}
    assert [e.term for e in res.excluded_terms] == ["A", "B", "A:B"]
    assert all("constant" in e.reason for e in res.excluded_terms)
    assert all(math.isnan(c.p_raw) and not c.significant for c in contrasts)


@pytest.mark.parametrize("method", ["rm", "lmm"])
def test_pure_additive_data_without_residual(method: str) -> None:
    # y = case + A effect, exactly: zero error everywhere; B and A:B have no effect at all
    case = np.linspace(-1, 1, 8)[:, None, None]
    a_eff = np.array([0.0, 0.25, 0.5])[None, :, None]
    y = case + a_eff + np.zeros((8, 3, 2))
    res, _ = run(y, method)
    assert res.terms == {}
    reasons = {e.term: e.reason for e in res.excluded_terms}
    assert "infinite" in reasons["A"]
    if method == "rm":
        assert "both zero" in reasons["B"] and "both zero" in reasons["A:B"]


def test_one_factor_without_effect_and_zero_error_other_tested() -> None:
    # B has exactly no effect and no B × case variation; A varies with noise
    rng = np.random.default_rng(3)
    a_part = rng.normal(size=(10, 3, 1))
    y = np.repeat(a_part, 2, axis=2)
    res, _ = run(y, "rm")
    assert set(res.terms) == {"A"}
    assert {e.term for e in res.excluded_terms} == {"B", "A:B"}


@pytest.mark.parametrize("method", ["rm", "lmm"])
def test_single_level_factor(method: str) -> None:
    rng = np.random.default_rng(4)
    y = rng.normal(size=(9, 3, 1))
    res, _ = run(y, method, levels=[["a1", "a2", "a3"], ["only"]])
    assert set(res.terms) == {"A"}
    assert {e.term: e.reason for e in res.excluded_terms}["B"] == "single level"
    assert "A:B" in {e.term for e in res.excluded_terms}


def test_rounding_residue_is_not_an_f() -> None:
    # an effect of 1e-14 on a response of size 1: below 1e-10 of the total SS -> exactly 0
    rng = np.random.default_rng(5)
    y = rng.normal(size=(12, 3, 2))
    y[:, :, 1] = y[:, :, 0] + 1e-14 * rng.normal(size=(12, 3))
    res, _ = run(y, "rm")
    assert "B" not in res.terms and "A:B" not in res.terms


@pytest.mark.parametrize("method", ["rm", "lmm"])
def test_too_few_cases(method: str) -> None:
    res, _ = run(np.arange(6, dtype=float).reshape(1, 3, 2), method)
    assert res.terms == {} and all("fewer than 2" in e.reason for e in res.excluded_terms)


def test_frame_with_no_complete_case_and_constant_fitted_model() -> None:
    df = pd.DataFrame({"case_id": ["c1", "c2"], "A": ["a1", "a2"], "value": [1.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res, dropped = anova_frame(df, ["A"])
        fitted, _ = anova_frame(df, ["A"], method="lmm", keep_incomplete=True)
    assert res.terms == {} and len(dropped) == 2
    assert fitted.terms == {} and fitted.excluded_terms


def test_invalid_inputs_raise_the_project_error() -> None:
    with pytest.raises(StatsInputError):
        anova_balanced(np.zeros((3, 2)), ["A"], [["a", "b"]], method="anova")
    with pytest.raises(StatsInputError):
        anova_balanced(np.zeros((3, 3)), ["A"], [["a", "b"]])
    with pytest.raises(StatsInputError):
        anova_frame(pd.DataFrame({"case_id": [], "A": [], "value": []}), ["A"], keep_incomplete=True)
    with pytest.raises(ValueError):
        canonical_correction(None)
    assert canonical_correction("FDR_BH") == "bh" and canonical_correction("Holm") == "holm"


@pytest.mark.parametrize("method", ["rm", "lmm"])
def test_small_within_case_effect_beside_a_huge_case_spread_is_tested(method: str) -> None:
    # cases spread with SD 1e5, the A effect and the noise inside cases are of size 1: the
    # within-case sums of squares are ~1e-10 of the total, yet every term is a real test
    # (the zero threshold is relative to the within-case variation, not the total).
    rng = np.random.default_rng(6)
    y = 1e5 * rng.normal(size=(12, 1, 1)) + rng.normal(size=(12, 3, 2))
    y[:, 2, :] += 1.0
    res, contrasts = run(y, method)
    assert set(res.terms) == {"A", "B", "A:B"}
    small = y - y.mean(axis=(1, 2), keepdims=True)  # the same data without the case spread
    ref = anova_balanced(small, ["A", "B"], LEVELS, method=method if method == "rm" else "rm")
    if method == "rm":  # rm tests inside cases only: identical to the centred data
        for t in ("A", "B", "A:B"):
            assert pytest.approx(ref.terms[t].F, rel=1e-6) == res.terms[t].F
    assert all(math.isfinite(c.p_raw) for c in contrasts)


def test_no_within_case_variation_beside_a_case_spread_is_excluded() -> None:
    # every case constant across cells (only rounding residue within cases): nothing to test
    y = np.repeat(np.repeat(np.linspace(1e3, 2e3, 9)[:, None, None], 3, axis=1), 2, axis=2)
    y = y + 1e-13 * np.arange(6).reshape(1, 3, 2)
    res, contrasts = run(y, "rm")
    assert res.terms == {}
    assert all(math.isnan(c.p_raw) for c in contrasts)


def test_lmm_boundary_note_is_not_an_rm_note() -> None:
    rng = np.random.default_rng(8)
    y = rng.normal(size=(10, 3, 2))
    y -= y.mean(axis=(1, 2), keepdims=True)  # no case variance at all: lmm on the boundary
    lmm = anova_balanced(y, ["A", "B"], LEVELS, method="lmm")
    rm = anova_balanced(y, ["A", "B"], LEVELS, method="rm")
    assert any("boundary" in n for n in lmm.notes)
    assert rm.notes == ()
