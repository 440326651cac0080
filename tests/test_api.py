"""The Python API: run / analyze / load_runs return typed results equal to what the CLI
writes; overrides are the CLI's flags; errors are the CLI's errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import eval_harness
from eval_harness import Analysis, Result, analyze, load_runs, run
from eval_harness.errors import ConfigError, UsageError
from tests.conftest import run_cli


def test_public_names_are_exported() -> None:
    assert set(eval_harness.__all__) >= {"run", "analyze", "load_runs", "Result", "Analysis"}
    with pytest.raises(AttributeError):
        _ = eval_harness.nope  # type: ignore[attr-defined]


def test_run_resumes_and_returns_the_analysis(starter_runs: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(starter_runs, runs / "starter")
    config = starter_runs.parent.parent / "demo" / "eval.yaml"
    result = run(config, runs_dir=runs, output=tmp_path / "out")
    assert isinstance(result, Result)
    assert (result.name, result.cells, result.ran, result.skipped_complete) == ("starter", 40, 0, 40)
    assert result.eval_dir == runs / "starter" and result.exit_code == 0
    a = result.analysis
    assert isinstance(a, Analysis) and a.passed
    assert a.anova == json.loads((tmp_path / "out" / "anova.json").read_text())
    # on disk: summary + per-case rows as JSON Lines (docs/reports.md); joined, the same doc
    from eval_harness.analysis.compare.files import read_comparisons

    assert a.comparisons == read_comparisons(tmp_path / "out")
    assert set(a.files) >= {"anova.json", "comparisons.json", "report.md", "report.html"}
    assert all(p.is_file() for p in a.files.values())
    terms = a.terms()
    assert list(terms.index) == ["model", "style", "model:style"]
    assert terms.loc["style", "F"] == pytest.approx(a.anova["terms"]["style"]["F"])
    assert terms.loc["style", "p_adjusted"] == a.anova["terms"]["style"]["p_adjusted"]
    contrasts = a.contrasts()
    assert list(contrasts["factor"]) == ["model", "style"]
    pair = a.anova["contrasts"]["style"]["pairs"][0]
    row = contrasts[contrasts["factor"] == "style"].iloc[0]
    assert (row["a"], row["b"], row["estimate"], row["ci_low"]) == (
        pair["a"], pair["b"], pair["estimate"], pair["ci"][0])
    conds = a.conditions()
    assert len(conds) == 4 and {"model", "style", "mean", "ci_low", "ci_high"} <= set(conds)
    table = a.comparison_table()
    assert len(table) == 3 and set(table["kind"]) == {"reference"}
    assert isinstance(a.frame, pd.DataFrame) and set(a.frame["judge"]) >= {"correct", "composite"}


def test_analyze_matches_the_cli(starter_runs: Path, tmp_path: Path) -> None:
    a = analyze(starter_runs, output=tmp_path / "api", correction="bh",
                simple_effects="model:style")
    code, out, err = run_cli("--analyze-only", str(starter_runs), "--output", str(tmp_path / "cli"),
                             "--correction", "bh", "--simple-effects", "model:style", "--json")
    assert code == 0, err
    cli = json.loads(out)
    for doc in (a.anova, cli):
        doc.pop("generated_at", None)
    assert a.anova == cli
    assert a.anova["correction"] == "bh"
    simple = a.contrasts().dropna(subset=["by"])
    assert set(simple["by"]) == {"style"} and len(simple) == 2  # model within each style


def test_analyze_several_roots_and_a_config(starter_runs: Path, tmp_path: Path) -> None:
    config = starter_runs.parent.parent / "demo" / "eval.yaml"
    a = analyze([starter_runs], config=config, output=tmp_path / "o", method="lmm")
    assert a.anova["method"]["name"] == "lmm"
    assert a.anova["design"]["factors"]["model"] == ["starter-small", "starter-large"]  # config order


def test_run_a_mapping_config_and_gates(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: 1}}\n- {id: c2, input: {q: 2}}\n")
    config = {
        "name": "mapped", "matrix": {"factors": {"model": ["m1", "m2"]}},
        "runner": {"type": "cli", "command": "echo {model} {q}"},
        "dataset": {"path": "cases.yaml"},
        "judges": [{"name": "said_m1", "check": "return 'm1' in outputs['output'], ''"}],
        "thresholds": {"judges": {"said_m1": {"min_pass_rate": 0.9}}},
    }
    result = run(config, base_dir=tmp_path, runs_dir=tmp_path / "runs",
                 output=tmp_path / "out", export=tmp_path / "base.json")
    assert result.ok == 4 and result.errored == 0
    assert not list(tmp_path.glob(".eval-api-*"))  # the temporary config is removed
    a = result.analysis
    assert a is not None and not a.passed and result.exit_code == 1
    assert any("threshold failed" in f for f in a.failures)
    assert a.exported == tmp_path / "base.json" and a.exported.is_file()
    only = run(config, base_dir=tmp_path, runs_dir=tmp_path / "runs", analyze=False)
    assert only.analysis is None and only.ran == 0 and only.exit_code == 0


def test_errors_are_the_clis(tmp_path: Path, starter_runs: Path) -> None:
    with pytest.raises(UsageError, match="unknown option 'correctoin'"):
        analyze(starter_runs, correctoin="bh")
    with pytest.raises(UsageError, match="no such directory"):
        analyze(tmp_path / "missing")
    with pytest.raises(ConfigError) as info:
        run(tmp_path / "nope.yaml")
    assert info.value.exit_code == 2


def test_load_runs_is_the_tidy_frame(starter_runs: Path) -> None:
    df = load_runs(starter_runs)
    assert {"run_id", "case_id", "judge", "value", "model", "style"} <= set(df.columns)
    assert df[df["judge"] == "composite"].shape[0] == 40


def test_a_judge_that_never_works_is_not_silent(tmp_path: Path) -> None:
    from eval_harness.errors import NoUsableResults

    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: 1}}\n- {id: c2, input: {q: 2}}\n")
    config = {
        "name": "deadjudge", "matrix": {"factors": {"model": ["m1", "m2"]}},
        "runner": {"type": "cli", "command": "echo {model} {q}"},
        "dataset": {"path": "cases.yaml"},
        "judges": [{"name": "ok", "check": "return True, ''"},
                   {"name": "broken", "check": "return outputs['nope'], ''"}],
    }
    with pytest.raises(NoUsableResults, match="`broken` errored on every sample") as info:
        run(config, base_dir=tmp_path, runs_dir=tmp_path / "runs", output=tmp_path / "out")
    assert info.value.exit_code == 4
    a = analyze(tmp_path / "runs" / "deadjudge", output=tmp_path / "out2",
                allow_errored_judges=True)
    assert a.errored_judges == ["broken"]
