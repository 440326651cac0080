"""Labels matched to stored verdicts, and ``orchestrate calibrate RUNS``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from eval_harness.analysis.loading.tidy_frame import load_runs
from eval_harness.judges.label_match import match_labels, runs_calibration
from eval_harness.store.labels import LabelRow, append_label, latest_labels


def _label(run: dict, judge: str, label) -> LabelRow:
    return LabelRow(schema_version=1, run=run["run_id"], case=run["case_id"],
                    condition=run["condition_id"], replication=int(run["replication"]),
                    judge=judge, label=label, who="t", when="2026-01-01T00:00:00+00:00")


def _frame() -> pd.DataFrame:
    rows = []
    for i, (value, norm) in enumerate([(True, 1.0), (False, 0.0), (True, 1.0), (False, 0.0)]):
        rows.append({"run_id": f"r{i}", "condition_id": "c", "replication": 1,
                     "case_id": f"k{i}", "judge": "ok", "value": value, "kind": "boolean",
                     "normalized": norm, "errored": False})
    for i, v in enumerate([1.0, 3.0, 5.0]):  # a 1-5 judge: normalised (v - 1) / 4
        rows.append({"run_id": f"r{i}", "condition_id": "c", "replication": 1,
                     "case_id": f"k{i}", "judge": "score", "value": v, "kind": "numeric",
                     "normalized": (v - 1) / 4, "errored": False})
    rows.append({"run_id": "r3", "condition_id": "c", "replication": 1, "case_id": "k3",
                 "judge": "score", "value": None, "kind": "numeric", "normalized": None,
                 "errored": True})
    return pd.DataFrame(rows)


def test_right_wrong_and_true_scores() -> None:
    f = _frame()
    s = f.to_dict("records")
    labels = latest_labels([
        _label(s[0], "ok", "right"),   # judge pass, human pass: tp
        _label(s[1], "ok", "wrong"),   # judge fail, human pass: fn
        _label(s[2], "ok", "wrong"),   # judge pass, human fail: fp
        _label(s[3], "ok", "wrong"),   # superseded below
        _label(s[3], "ok", "right"),   # judge fail, human fail: tn
        _label(s[4], "score", 4.0),    # judge 1 (fail); true 4 -> 0.75: human pass -> fn
        _label(s[6], "score", 2.0),    # judge 5 (pass); true 2 -> 0.25: fp
        _label(s[7], "score", "right"),  # errored judge value: unmatched
    ])
    cells, unmatched = match_labels(labels, f)
    assert cells == {"ok": (1, 1, 1, 1), "score": (0, 1, 1, 0)}
    assert [u["case"] for u in unmatched] == ["k3"] and "no pass/fail" in unmatched[0]["reason"]


def test_unknown_sample_is_unmatched_not_counted() -> None:
    row = LabelRow(schema_version=1, run="x", case="nope", condition="c", replication=1,
                   judge="ok", label="right", when="t")
    report = runs_calibration(_frame(), [row], source="mem")
    assert report["groups"] == [] and report["unmatched"][0]["reason"].startswith("no such")


def test_calibrate_runs_cli(starter_runs: Path, tmp_path: Path, cli) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(starter_runs, runs / "starter")
    frame = load_runs([runs])
    rows = frame[frame["judge"] == "correct"].to_dict("records")
    passes = [r for r in rows if r["value"] == 1]
    fails = [r for r in rows if r["value"] == 0]
    assert len(passes) >= 6 and len(fails) >= 4
    # tp 4, fn 2, fp 2, tn 2 -> po = 0.6, pe = (6*6 + 4*4)/100 = 0.52, kappa = 1/6
    plan = [(r, "right") for r in passes[:4]] + [(r, "wrong") for r in passes[4:6]] + \
           [(r, "wrong") for r in fails[:2]] + [(r, "right") for r in fails[2:4]]
    for r, label in plan:
        append_label(runs / "starter", _label(r, "correct", label))
    code, out, err = cli("calibrate", str(runs), "--json")
    assert code == 0, err
    group = json.loads(out)["groups"][0]
    assert group["confusion"] == {"tp": 4, "fn": 2, "fp": 2, "tn": 2}
    assert group["kappa"] == pytest.approx(1 / 6)
    assert group["false_pass_rate"] == pytest.approx(0.5)  # fp / (fp + tn)
    assert group["false_fail_rate"] == pytest.approx(2 / 6)  # fn / (tp + fn)
    code, _, err = cli("calibrate", str(runs), "--min-kappa", "0.1")
    assert code == 1 and "FAIL" in cli("calibrate", str(runs), "--min-kappa", "0.1")[1]
    (runs / "starter" / "labels.jsonl").write_text('{"run": 1}\n')
    code, _, err = cli("calibrate", str(runs))
    assert code == 2 and "labels.jsonl:1" in err
    (runs / "starter" / "labels.jsonl").unlink()
    code, _, err = cli("calibrate", str(runs))
    assert code == 2 and "no labels.jsonl" in err
    assert cli("calibrate")[0] == 2
