"""Issue 22: analyse what is configured. After renaming or removing a level, the analysis
(with --config, or the config recorded at run time) still analysed and ranked every
condition ever run into the folder; a quoted "on" beside an old unquoted on made a 4-level
factor (off, on, False, True)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from eval_harness.analysis.configured import restrict_to_configured
from eval_harness.config.loader import load_config
from eval_harness.config.recorded import record_config
from eval_harness.judges.scorer import config_judge_digests
from tests.conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rundir_writer import write_native

CONFIG = """\
name: demo
matrix:
  factors:
    retrieval: ["off", "on"]
judges:
  - name: q
    check: 'return 1, ""'
    score_range: [0, 10]
"""


def _runs(root: Path) -> None:
    # old runs recorded the YAML 1.1 booleans False / True; new ones the quoted text
    data = {(lv,): {f"c{i}": [{"q": float((3 * i + 5 * k) % 11)}] for i in range(8)}
            for k, lv in enumerate(["off", "on", False, True])}
    write_native(root, data, ["retrieval"], ranges={"q": [0, 10]})


def test_unconfigured_conditions_are_left_out_and_listed(tmp_path: Path) -> None:
    _runs(tmp_path / "runs")
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG)
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs" / "demo"), "--config",
                           str(cfg), "--output", str(tmp_path / "a"))
    assert code == 0, err
    assert "note: 2 condition(s) in the runs are not in the configured matrix" in err
    anova = json.loads((tmp_path / "a" / "anova.json").read_text())
    assert anova["design"]["factors"] == {"retrieval": ["off", "on"]}  # main: 4 levels
    assert anova["terms"]["retrieval"]["df_num"] == 1  # main: F(3, 21)
    excluded = anova["excluded_conditions"]
    assert sorted(str(e["levels"]["retrieval"]) for e in excluded) == ["False", "True"]
    assert all("not a configured level of retrieval" in e["reason"] for e in excluded)
    lead = json.loads((tmp_path / "a" / "leaderboard.json").read_text())
    assert len(lead["conditions"]) == 2


def test_the_recorded_config_is_used_the_same_way(tmp_path: Path) -> None:
    _runs(tmp_path / "runs")
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG)
    loaded = load_config(cfg, strict=False)
    record_config(loaded, tmp_path / "runs" / "demo", "2026-01-01",
                  judge_digests=config_judge_digests(loaded.config))
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs" / "demo"), "--output",
                           str(tmp_path / "b"))
    assert code == 0, err
    anova = json.loads((tmp_path / "b" / "anova.json").read_text())
    assert len(anova["excluded_conditions"]) == 2


def test_types_are_compared_exactly() -> None:
    frame = pd.DataFrame({"condition_id": ["a", "b", "c"], "x": [1, True, "1"],
                          "value": [0.0, 1.0, 2.0]})
    frame.attrs["levels"] = {"x": [1, True, "1"]}
    kept, excluded = restrict_to_configured(frame, {"x": [1]})
    assert kept["condition_id"].tolist() == ["a"] and kept.attrs["levels"] == {"x": [1]}
    assert [e["condition_id"] for e in excluded] == ["b", "c"]
    same, none = restrict_to_configured(frame, None)
    assert same is frame and none == []


def test_nothing_configured_is_said_plainly(tmp_path: Path) -> None:
    data = {(lv,): {"c0": [{"q": 1.0}], "c1": [{"q": 2.0}]} for lv in (1, 2)}
    write_native(tmp_path / "runs", data, ["retrieval"], ranges={"q": [0, 10]})
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG)
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs" / "demo"), "--config",
                           str(cfg), "--output", str(tmp_path / "c"))
    assert code == 2
    assert "no condition in the runs is in the configured matrix (2 left out" in err


def test_run_costs_cover_only_the_analysed_conditions() -> None:
    frame = pd.DataFrame({"condition_id": ["a", "b"], "x": ["on", "gone"],
                          "run_id": ["r1", "r2"], "value": [0.0, 1.0]})
    frame.attrs["run_costs"] = [{"run_id": "r1", "condition_id": "a", "cost_usd": 1.0},
                                {"run_id": "r2", "condition_id": "b", "cost_usd": 5.0}]
    kept, excluded = restrict_to_configured(frame, {"x": ["on"]})
    assert [e["condition_id"] for e in excluded] == ["b"]
    assert [rc["run_id"] for rc in kept.attrs["run_costs"]] == ["r1"]
    assert [rc["run_id"] for rc in frame.attrs["run_costs"]] == ["r1", "r2"]  # not mutated
