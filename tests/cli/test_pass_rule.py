"""Issue 22, "pass misleads": one pass rule (every gate judge passes and the composite
reaches the configured pass mark) for reports, comparisons, leaderboard and thresholds,
stated in the report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.verdicts import VerdictRule, sample_table
from tests.conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from rundir_writer import write_native

CONFIG = """\
name: demo
matrix:
  factors:
    model: [m1, m2]
  analysis:
    pass_mark: 0.9
judges:
  - name: correct
    check: 'return True, ""'
  - name: style
    check: 'return 5, ""'
    score_range: [1, 5]
thresholds:
  min_pass_rate: 0.5
"""


def test_reports_use_the_configured_pass_mark(tmp_path: Path) -> None:
    # correctness ~0.17 on m1, the style judge always 5/5: composite 0.5 when wrong. On
    # main the report counted composite >= 0.5 (100 % "pass") while comparisons used 0.9.
    data = {(m,): {f"c{i}": [{"correct": (i == 0) or m == "m2", "style": 5}] for i in range(6)}
            for m in ("m1", "m2")}
    write_native(tmp_path / "runs", data, ["model"], ranges={"style": [1, 5]})
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "out"
    code, stdout, err = run_cli("--analyze-only", str(tmp_path / "runs" / "demo"), "--config",
                                str(cfg), "--output", str(out))
    assert code == 1, err  # the m1 threshold (pass rate 1/6 < 0.5) fails
    report = json.loads((out / "report.json").read_text())
    rates = {c["levels"]["model"]: round(c["pass_rate"], 6) for c in report["conditions"]}
    assert rates == {"m1": round(1 / 6, 6), "m2": 1.0}
    comps = json.loads((out / "comparisons.json").read_text())
    assert comps["verdict_rule"]["pass_mark"] == 0.9
    lead = json.loads((out / "leaderboard.json").read_text())
    assert {r["levels"]["model"]: round(r["pass_rate"], 6) for r in lead["conditions"]} == rates
    assert lead["pass_rule"] == report["pass_rule"]
    thresholds = json.loads((out / "thresholds.json").read_text())["results"]
    assert {r["levels"]["model"]: round(r["value"], 6) for r in thresholds} == rates
    # the report states the rule
    assert "composite ≥ 0.9" in report["pass_rule"]
    assert "Pass rule: requirements — a sample passes when every boolean judge is true and " \
           "its composite ≥ 0.9" in (out / "report.md").read_text()
    assert "pass rule: requirements — a sample passes when every boolean judge is true " \
           "and its composite ≥ 0.9" in " ".join(stdout.split())


def _frame(correct: list[bool], composite: list[float]) -> pd.DataFrame:
    rows = []
    for i, (ok, comp) in enumerate(zip(correct, composite, strict=True)):
        base = {"condition_id": "c", "run_id": "r", "replication": 1, "case_id": f"k{i}",
                "errored": False, "case_status": "ok", "case_hash": "h"}
        rows.append({**base, "judge": "correct", "kind": "boolean", "value": float(ok),
                     "normalized": float(ok)})
        rows.append({**base, "judge": "composite", "kind": "composite", "value": comp,
                     "normalized": comp})
    return pd.DataFrame(rows)


def test_gate_judges_must_pass_as_well() -> None:
    # a gate judge that does not enter the composite (weight 0) still decides the pass
    frame = _frame([False, True, True], [0.9, 0.9, 0.4])
    plain = sample_table(frame, VerdictRule(pass_mark=0.5, rule="composite"))
    gated = sample_table(frame, VerdictRule(pass_mark=0.5, gates=("correct",), rule="composite"))
    assert sample_table(frame, VerdictRule(pass_mark=0.5))["passed"].tolist() == [0.0, 1.0, 0.0]
    assert plain["passed"].tolist() == [1.0, 1.0, 0.0]
    assert gated["passed"].tolist() == [0.0, 1.0, 0.0]
    assert "gate judges: correct" in VerdictRule(gates=("correct",)).text()
    assert np.isnan(sample_table(_frame([True], [np.nan]), VerdictRule())["composite"][0])
