"""agent-eval-harness run directories analysed as that tool scores them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from eval_harness.aeh.scoring import read_aeh_run
from eval_harness.analysis.loading.tidy_frame import load_runs
from tests.conftest import FIXTURES, run_cli

SAMPLE = FIXTURES / "aeh_sample_runs"
RUNS = SAMPLE / "anova-example"
# R: d <- data.frame(case=factor(rep(1:4, 2)), context=factor(rep(c("cognee","none"), each=4)),
#                    y=c(1, .75, .75, 0, .75, .5, 0, 0))
#    summary(aov(y ~ context + Error(case/context)))   # F = 3.947, p = 0.1411
F_CONTEXT = 75 / 19
P_CONTEXT = 0.14112193971403447


def _means(anova: dict) -> dict[str, float]:
    return {c["levels"]["context"]: c["mean"] for c in anova["condition_summaries"]}


def _check(anova: dict) -> None:
    assert _means(anova) == pytest.approx({"cognee": 0.625, "none": 0.3125}, abs=1e-12)
    assert set(anova["terms"]) == {"context"}  # the one-level model factor is dropped
    term = anova["terms"]["context"]
    assert term["F"] == pytest.approx(F_CONTEXT, abs=1e-6)
    assert term["p_raw"] == pytest.approx(P_CONTEXT, abs=1e-6)
    assert anova["design"]["n_cases"] == 4


def test_sample_runs_without_config_give_its_numbers(tmp_path: Path) -> None:
    code, out, err = run_cli("--analyze-only", str(SAMPLE), "--output", str(tmp_path / "o"),
                             "--json")
    assert code == 0, err
    _check(json.loads(out))


def test_sample_runs_with_its_eval_yaml_give_the_same(tmp_path: Path) -> None:
    code, out, err = run_cli("--analyze-only", str(RUNS), "--config", str(SAMPLE / "eval.yaml"),
                             "--output", str(tmp_path / "o"), "--json")
    assert code == 0, err
    _check(json.loads(out))


def test_console_names_the_rule_and_never_reports_zero_cases(tmp_path: Path) -> None:
    code, out, err = run_cli("--analyze-only", str(SAMPLE), "--output", str(tmp_path / "o"))
    assert code == 0, err
    assert "2 conditions × 4 cases" in out and "× 0 cases" not in out
    assert "fewer than two judges" not in out
    assert "agent-eval-harness runs scored with its rule" in out


def test_run_without_condition_json_takes_the_model_from_run_result(tmp_path: Path) -> None:
    for name, model in (("r-a", "m-a"), ("r-b", "m-b")):
        run = tmp_path / name
        run.mkdir()
        (run / "run_result.json").write_text(json.dumps({"model": model, "cost_usd": 0.1}))
        per_case = {f"c{i}": {"q": {"value": i + (name == "r-b"), "judge_type": "numeric"}}
                    for i in range(1, 4)}
        (run / "summary.yaml").write_text(yaml.safe_dump({"run_id": name, "per_case": per_case}))
    run, _recs = read_aeh_run(str(tmp_path / "r-a"))
    assert run["levels"] == {"model": "m-a"}
    df = load_runs(tmp_path)
    assert df.attrs["factors"] == ["model"]
    comp = df[df["judge"] == "composite"].groupby("model", observed=True)["value"].mean()
    assert comp.to_dict() == pytest.approx({"m-a": 0.25, "m-b": 0.5})  # (v-1)/4


def _aeh(tmp_path: Path, per_case: dict) -> Path:
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / "condition.json").write_text(json.dumps({"levels": {"f": "a"}}))
    (run / "summary.yaml").write_text(yaml.safe_dump({"run_id": "run", "per_case": per_case}))
    return run


def test_errored_judge_is_left_out_and_all_errored_is_errored_not_zero(tmp_path: Path) -> None:
    run = _aeh(tmp_path, {
        "c1": {"q": {"value": 5}, "r": {"value": None, "error": "timeout"}},
        "c2": {"q": {"value": None, "error": "boom"}, "r": {"value": None, "error": "boom"}},
        "c3": {"q": {"value": None}, "ok": {"value": True}},  # skipped by `if:`, gate passes
        "c4": {"q": {"value": 3, "score_range": [0, 10]}},  # a recorded range wins
    })
    _, recs = read_aeh_run(str(run))
    by = {r["case_id"]: r for r in recs}
    assert by["c1"]["composite"] == 1.0
    assert by["c2"].get("composite_errored") is True and "composite" not in by["c2"]
    assert by["c3"]["composite"] == 1.0
    assert by["c4"]["composite"] == pytest.approx(0.3)


def test_config_range_and_reward_block_apply(tmp_path: Path) -> None:
    shutil.copytree(RUNS, tmp_path / "runs")
    cfg = tmp_path / "eval.yaml"
    text = (SAMPLE / "eval.yaml").read_text().replace("score_range: [1, 5]", "score_range: [0, 5]")
    cfg.write_text(text + "reward:\n  judge: solution_quality\n  normalize: true\n")
    code, out, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--config", str(cfg),
                             "--output", str(tmp_path / "o"), "--json")
    assert code == 0, err
    # reward = solution_quality / 5 (no gate in judge mode): cognee 16/20, none 12/20
    assert _means(json.loads(out)) == pytest.approx({"cognee": 0.8, "none": 0.6})


def test_worked_example_of_the_migration_doc(tmp_path: Path) -> None:
    """Its reference-level simple effect of `a` is 0; our joint F for `a` is 96."""
    from tests.analysis.rundir_writer import write_aeh

    vals = {"c1": [.5, .5, .5, .9], "c2": [.4, .4, .4, .8], "c3": [.6, .6, .6, .9],
            "c4": [.5, .5, .5, 1.0]}
    cells = [("a1", "b1"), ("a1", "b2"), ("a2", "b1"), ("a2", "b2")]
    data = {cell: {c: [{"q": v[i] * 4 + 1}] for c, v in vals.items()}  # 1-5 scale
            for i, cell in enumerate(cells)}
    write_aeh(tmp_path / "runs", data, ["a", "b"])
    code, out, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                             str(tmp_path / "o"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    # R: summary(aov(y ~ a*b + Error(case/(a*b))))  -> F(1, 3) = 96 for a, b and a:b
    for term in ("a", "b", "a:b"):
        assert doc["terms"][term]["F"] == pytest.approx(96.0)
    assert doc["terms"]["a"]["significant"]
    assert doc["anova"]["significant"] == {"a": True, "b": True, "a:b": True}
