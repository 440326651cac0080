"""anova.json: contract fields, schema validity, corrections, contrasts, per-judge, degenerate data."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path
from typing import Any

import jsonschema  # dev dependency (pyproject [dev])
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eval_harness.analysis.anova.document import build_anova
from eval_harness.analysis.anova.power import mde, variance_from_components
from eval_harness.analysis.loading.tidy_frame import load_runs
from eval_harness.analysis.stats import adjust_pvalues, anova_balanced
from eval_harness.errors import UsageError
from tests.analysis.rundir_writer import write_aeh, write_native

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[3] / "eval_harness" / "analysis" / "schema" / "anova.schema.json").read_text()
)
LEVELS = {"model": ["m1", "m2"], "effort": ["low", "mid", "high"]}


def frame_from(y: np.ndarray, *, judges: dict[str, np.ndarray] | None = None,
               levels: dict[str, list[Any]] = LEVELS) -> pd.DataFrame:
    """y: (n, K, L1, L2) composite values per case, replication, cell."""
    n, k = y.shape[:2]
    factors = list(levels)
    rows = []
    for i, r in itertools.product(range(n), range(k)):
        for idx in itertools.product(*(range(len(v)) for v in levels.values())):
            lv = {f: levels[f][j] for f, j in zip(factors, idx, strict=True)}
            cid = "-".join(str(v) for v in lv.values())
            for judge, arr in {"composite": y, **(judges or {})}.items():
                v = float(arr[(i, r, *idx)])
                rows.append({"eval": "t", "run_id": f"{cid}-r{r + 1}", "condition_id": cid, **lv,
                             "replication": r + 1, "case_id": f"c{i}", "judge": judge, "value": v,
                             "kind": "composite" if judge == "composite" else "numeric",
                             "errored": bool(np.isnan(v)), "case_status": "ok", "latency_s": 1.0 + v,
                             "cost_usd": 0.01 * (1 + idx[0]), "tokens": 10.0, "tool_calls": np.nan,
                             "case_hash": "", "normalized": v})
    df = pd.DataFrame(rows)
    df.attrs.update(factors=factors, levels=levels, issues=[], case_tags={})
    return df


def _data(seed: int = 3, n: int = 12, k: int = 2, effect: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.normal(0, 1, (n, k, 2, 3)) + rng.normal(0, 1, (n, 1, 1, 1))
    y[:, :, 1, :] += effect
    return y


def _valid(doc: dict[str, Any]) -> None:
    text = json.dumps(doc, allow_nan=False)  # no NaN / inf anywhere
    jsonschema.validate(json.loads(text), SCHEMA)


def test_contract_fields_and_schema() -> None:
    doc = build_anova(frame_from(_data()), per_judge=False)
    _valid(doc)
    assert doc["schema_version"] == 1 and doc["response"] == "composite"
    assert doc["design"]["factors"] == LEVELS
    assert (doc["design"]["n_conditions"], doc["design"]["n_cases"], doc["design"]["replications"]) == (6, 12, 2)
    assert doc["design"]["balanced"] is True
    assert doc["method"] == {"name": "rm", "requested": "auto", "label": doc["method"]["label"],
                             "sphericity": "greenhouse-geisser", "fit": "closed-form balanced"}
    assert "method auto → rm: every case has a value in every cell" in doc["notes"]
    assert list(doc["terms"]) == ["model", "effort", "model:effort"]
    for key in ("F", "df_num", "df_den", "gg_epsilon", "p_uncorrected", "p_raw", "p_adjusted",
                "significant", "partial_eta_sq"):
        assert key in doc["terms"]["model"]
    assert doc["family_size"] == 3


def test_terms_equal_the_core_on_replication_means_and_holm_is_applied() -> None:
    y = _data()
    doc = build_anova(frame_from(y))
    core = anova_balanced(y.mean(axis=1), ["model", "effort"], list(LEVELS.values()), "rm")
    raw = [core.terms[t].p_raw for t in core.terms]
    adj = adjust_pvalues(raw, "holm")
    for (name, t), p_adj in zip(core.terms.items(), adj, strict=True):
        got = doc["terms"][name]
        assert math.isclose(got["F"], t.F, rel_tol=1e-12)
        assert math.isclose(got["p_adjusted"], p_adj, rel_tol=1e-12)
        assert got["significant"] == (p_adj < 0.05)


@pytest.mark.parametrize(("given", "canonical"), [("fdr_bh", "bh"), ("BH", "bh"), ("none", "none")])
def test_correction_names_are_canonical(given: str, canonical: str) -> None:
    doc = build_anova(frame_from(_data()), correction=given)
    assert doc["correction"] == canonical
    assert all(c["correction"] == canonical for c in doc["contrasts"].values())
    if canonical == "none":
        assert all(t["p_adjusted"] == t["p_raw"] for t in doc["terms"].values())
        assert all(t["significant"] == (t["p_raw"] < 0.05) for t in doc["terms"].values())


def test_lmm_method_block() -> None:
    doc = build_anova(frame_from(_data()), method="LMM")
    _valid(doc)
    assert doc["method"]["name"] == "lmm"
    assert doc["method"]["sphericity"] == "compound symmetry (assumed)"
    assert all(t["gg_epsilon"] is None for t in doc["terms"].values())


def test_contrasts_are_paired_t_per_factor_with_interaction_note() -> None:
    y = _data(effect=0.0)
    y[:, :, 1, 0] += 3.0  # model matters only at effort=low: a strong interaction
    doc = build_anova(frame_from(y), simple_effects="model:effort")
    _valid(doc)
    pair = doc["contrasts"]["model"]["pairs"][0]
    d = y.mean(axis=1)[:, 0, :].mean(axis=1) - y.mean(axis=1)[:, 1, :].mean(axis=1)
    t = stats.ttest_1samp(d, 0.0)
    assert math.isclose(pair["estimate"], d.mean(), rel_tol=1e-12)
    assert math.isclose(pair["p_raw"], t.pvalue, rel_tol=1e-9)
    assert doc["contrasts"]["model"]["family_size"] == 1
    assert doc["contrasts"]["effort"]["family_size"] == 3
    assert "model:effort" in doc["contrasts"]["model"]["note"]
    at_low = next(s for s in doc["simple_effects"] if s["at"] == "low")
    assert at_low["factor"] == "model" and at_low["pairs"][0]["significant"]
    assert [s["at"] for s in doc["simple_effects"]] == ["low", "mid", "high"]


def test_per_judge_block_is_one_bh_family_and_degenerate_judges_are_excluded() -> None:
    y = _data()
    rng = np.random.default_rng(9)
    judges = {"quality": y + rng.normal(0, 0.5, y.shape), "constant": np.ones_like(y)}
    doc = build_anova(frame_from(y, judges=judges), per_judge=True)
    _valid(doc)
    pj = doc["per_judge"]
    assert pj["correction"] == "bh" and list(pj["judges"]) == ["quality"]
    assert pj["excluded"][0]["judge"] == "constant" and "constant" in pj["excluded"][0]["reason"]
    raw = [t["p_raw"] for t in pj["judges"]["quality"]["terms"].values()]
    np.testing.assert_allclose([t["p_adjusted"] for t in pj["judges"]["quality"]["terms"].values()],
                               adjust_pvalues(raw, "bh"))
    assert pj["family_size"] == 3


def test_errored_samples_are_listed_never_zero() -> None:
    y = _data(k=1)
    y[0, 0, 0, 0] = np.nan  # errored: case c0 misses a cell
    df = frame_from(y)
    doc = build_anova(df, method="rm")
    _valid(doc)
    assert doc["errored_samples"]["count"] == 1
    assert doc["errored_samples"]["samples"][0]["case_id"] == "c0"
    assert [c["case_id"] for c in doc["excluded_cases"]] == ["c0"]
    assert doc["design"]["n_cases"] == 11
    auto = build_anova(df)  # the default keeps c0 through the random-slopes model
    _valid(auto)
    assert auto["method"]["name"] == "mixed" and auto["method"]["requested"] == "auto"
    assert auto["excluded_cases"] == [] and auto["design"]["n_cases"] == 12
    assert any(n.startswith("method auto → mixed: 1 of 12 case(s)") for n in auto["notes"])
    assert all(b.get("source") == "fitted model" for b in auto["contrasts"].values())
    first = doc["condition_summaries"][0]
    assert first["levels"] == {"model": "m1", "effort": "low"}
    assert first["errored"] == 1 and first["n"] == 11
    assert math.isclose(first["mean"], float(np.nanmean(y[:, 0, 0, 0])), rel_tol=1e-12)


def test_condition_summary_ci_and_pareto() -> None:
    y = _data()
    doc = build_anova(frame_from(y))
    s = doc["condition_summaries"][4]  # m2, mid
    case_means = y[:, :, 1, 1].mean(axis=1)
    half = stats.t.ppf(0.975, 11) * case_means.std(ddof=1) / math.sqrt(12)
    assert s["levels"] == {"model": "m2", "effort": "mid"} and s["n"] == 12 and s["n_samples"] == 24
    np.testing.assert_allclose(s["ci"], [case_means.mean() - half, case_means.mean() + half])
    assert math.isclose(s["cost_mean_usd"], 0.02) and s["cost_source"] == "samples"
    means = {x["condition_id"]: (x["cost_mean_usd"], x["mean"]) for x in doc["condition_summaries"]}
    for cid in doc["pareto"]["frontier"]:
        c, m = means[cid]
        assert not any(c2 <= c and m2 > m for c2, m2 in means.values())


def test_unknown_costs_are_skipped_not_zero_and_coverage_is_reported() -> None:
    """A condition where some samples have no cost: the mean is over the known ones (never
    counting the unknown as 0), the coverage is reported, and it stays on the Pareto plot."""
    df = frame_from(_data())
    first = df["condition_id"] == "m1-low"
    unknown = first & (df["case_id"].isin(["c0", "c1", "c2"]))
    df.loc[unknown, "cost_usd"] = np.nan
    df.loc[first & ~unknown, "cost_usd"] = 0.004
    doc = build_anova(df)
    _valid(doc)
    s = next(x for x in doc["condition_summaries"] if x["condition_id"] == "m1-low")
    assert s["n_samples"] == 24 and s["cost_known_samples"] == 18
    assert math.isclose(s["cost_mean_usd"], 0.004) and math.isclose(s["cost_total_usd"], 18 * 0.004)
    assert "m1-low" not in doc["pareto"]["unknown_cost"]
    assert "m1-low" in doc["pareto"]["frontier"]  # the cheapest condition
    df.loc[first, "cost_usd"] = np.nan
    s = next(x for x in build_anova(df)["condition_summaries"] if x["condition_id"] == "m1-low")
    assert s["cost_mean_usd"] is None and s["cost_total_usd"] is None and s["cost_known_samples"] == 0


def test_power_and_variance_components() -> None:
    y = _data(k=3)
    doc = build_anova(frame_from(y))
    vc = doc["variance_components"]
    assert vc["replication"] is not None and vc["residual"] > 0
    prior = variance_from_components(vc, 3)
    assert math.isclose(doc["power"]["mde"], mde(prior.case_var, prior.resid_var, 12, 3), rel_tol=1e-12)
    within = y - y.mean(axis=1, keepdims=True)
    assert math.isclose(vc["replication"], float((within**2).sum()) / (12 * 6 * 2), rel_tol=1e-9)


def test_keep_incomplete_needs_lmm() -> None:
    y = _data(k=1)
    y[0, 0, 0, 0] = np.nan
    with pytest.raises(UsageError):
        build_anova(frame_from(y), keep_incomplete=True)
    doc = build_anova(frame_from(y), method="lmm", keep_incomplete=True)
    _valid(doc)
    assert doc["design"]["n_cases"] == 12 and doc["excluded_cases"] == []


@pytest.mark.parametrize("case", ["constant", "no_effect_zero_residual", "single_level", "zero_residual",
                                  "one_case", "empty"])
def test_degenerate_designs_give_valid_documents(case: str) -> None:
    n = 6
    y = np.zeros((n, 1, 2, 3))
    levels = LEVELS
    if case == "constant":
        y[:] = 0.7
    elif case == "no_effect_zero_residual":  # case effects only: every term and its error are 0
        y[:] = np.arange(n)[:, None, None, None] * 0.1
    elif case == "zero_residual":  # additive effects without noise: error strata are 0
        y[:] = np.arange(n)[:, None, None, None] * 0.1 + np.array([0.0, 0.2])[None, None, :, None]
    elif case == "single_level":
        y = np.random.default_rng(1).normal(size=(n, 1, 1, 3))
        levels = {"model": ["m1"], "effort": ["low", "mid", "high"]}
    elif case == "one_case":
        y = np.random.default_rng(1).normal(size=(1, 1, 2, 3))
    df = frame_from(y, levels=levels)
    if case == "empty":
        df = df.iloc[0:0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc = build_anova(df, per_judge=True)
    _valid(doc)
    for t in doc["terms"].values():
        assert math.isfinite(t["F"])
    if case != "single_level":
        assert doc["terms"] == {} and doc["family_size"] == 0
    if case in ("constant", "no_effect_zero_residual", "zero_residual", "one_case"):
        assert {e["term"] for e in doc["excluded_terms"]} == {"model", "effort", "model:effort"}
        assert all(e["reason"] for e in doc["excluded_terms"])
    if case == "single_level":
        assert set(doc["terms"]) == {"effort"}
        assert {e["term"] for e in doc["excluded_terms"]} == {"model", "model:effort"}
        assert doc["design"]["dropped_factors"][0]["factor"] == "model"


def test_both_layouts_give_the_same_terms(tmp_path: Path) -> None:
    """`--analyze-only` on agent-eval-harness runs = the same data in this tool's layout."""
    rng = np.random.default_rng(5)
    data: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = {}
    for combo in itertools.product(["m1", "m2"], ["none", "rag"]):
        data[combo] = {
            f"task-{i:03d}": [{"tests_pass": bool(rng.random() < 0.7),
                               "solution_quality": int(rng.integers(1, 6))} for _ in range(2)]
            for i in range(8)
        }
    specs = {"tests_pass": {"gate": True, "weight": 0.0}, "solution_quality": {"score_range": [1, 5]}}
    write_native(tmp_path / "native", data, ["model", "context"], ranges={"solution_quality": [1, 5]},
                 gates=["tests_pass"], weights={"tests_pass": 0.0})
    write_aeh(tmp_path / "aeh", data, ["model", "context"])
    native = build_anova(load_runs(tmp_path / "native"), per_judge=True)
    aeh = build_anova(load_runs(tmp_path / "aeh", judge_specs=specs), per_judge=True)
    _valid(native)
    _valid(aeh)
    assert native["terms"].keys() == aeh["terms"].keys() and native["terms"]
    for name, t in native["terms"].items():
        for key in ("F", "p_raw", "p_adjusted", "partial_eta_sq", "df_den"):
            assert math.isclose(t[key], aeh["terms"][name][key], rel_tol=1e-9), (name, key)
    assert native["per_judge"]["judges"].keys() == aeh["per_judge"]["judges"].keys()
    for j, block in native["per_judge"]["judges"].items():
        for name, t in block["terms"].items():
            assert math.isclose(t["p_adjusted"], aeh["per_judge"]["judges"][j]["terms"][name]["p_adjusted"])
    assert native["variance_components"] == pytest.approx(aeh["variance_components"])


def test_mixed_ddf_is_recorded_and_checked() -> None:
    y = _data(k=1)
    y[0, 0, 0, 0] = np.nan
    kr = build_anova(frame_from(y), method="mixed")
    sw = build_anova(frame_from(y), method="mixed", ddf="satterthwaite")
    _valid(kr)
    _valid(sw)
    assert "Kenward–Roger df" in kr["method"]["label"] and "Satterthwaite df" in sw["method"]["label"]
    assert kr["terms"]["model"]["df_den"] != pytest.approx(sw["terms"]["model"]["df_den"])
    with pytest.raises(UsageError, match="unknown ddf 'wald'") as info:
        build_anova(frame_from(y), method="mixed", ddf="wald")
    assert "kenward-roger or satterthwaite" in (info.value.hint or "")


def test_unknown_response_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no judge named"):
        build_anova(frame_from(_data()), response="nope")


def test_aeh_fixture_document_is_valid_and_drops_the_single_model() -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "aeh_runs"
    specs = {"tests_pass": {"gate": True, "weight": 0}, "solution_quality": {"score_range": [1, 5]}}
    doc = build_anova(load_runs(fixture, judge_specs=specs), per_judge=True)
    _valid(doc)
    assert list(doc["terms"]) == ["context"]
    assert [d["factor"] for d in doc["design"]["dropped_factors"]] == ["model"]
    assert doc["condition_summaries"][0]["cost_source"] == "runs"
    # without a config agent-eval-harness's own rule scores the runs: the same numbers
    bare = build_anova(load_runs(fixture), per_judge=True)
    _valid(bare)
    assert bare["terms"]["context"]["F"] == pytest.approx(doc["terms"]["context"]["F"])
    assert any(i["kind"] == "scoring" for i in bare["issues"])
    assert "tests_pass" in bare["per_judge"]["judges"]


@pytest.mark.parametrize("kind", ["constant", "no_error"])
def test_power_is_null_not_zero_on_degenerate_data(kind: str) -> None:
    # constant response, or y = case + effect exactly (zero error): an MDE of 0 (or of
    # rounding residue) would claim any difference is detectable
    y = np.full((8, 1, 2, 3), 0.5)
    if kind == "no_error":
        y = y + np.arange(8.0)[:, None, None, None] + np.array([0.0, 0.3])[None, None, :, None]
    doc = build_anova(frame_from(y))
    _valid(doc)
    assert doc["terms"] == {} and doc["power"] is None
    assert any(n.startswith("power/MDE not computed") for n in doc["notes"])
