"""Calibration statistics and the `calibrate` subcommand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_harness.cli.main import main
from eval_harness.judges.calibration import group_stats, kappa, kappa_bootstrap, wilson


def test_kappa_reference_values() -> None:
    # Cohen's kappa by hand: po = 0.70, pe = 0.50 -> 0.40; po = 0.90, pe = 0.50 -> 0.80
    assert kappa(20, 5, 10, 15) == pytest.approx(0.40)
    stats = group_stats((18, 2, 2, 18))
    assert stats["kappa"] == pytest.approx(0.80) and stats["agreement"] == pytest.approx(0.90)
    assert stats["false_pass_rate"] == pytest.approx(0.1) and stats["false_fail_rate"] == pytest.approx(0.1)


def test_wilson_reference_values() -> None:
    # DESIGN.md: Wilson 3/3 = [0.4385, 1]; 5/10 = [0.2366, 0.7634]
    assert wilson(3, 3) == pytest.approx((0.4385, 1.0), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_bootstrap_is_seeded_and_brackets_kappa() -> None:
    a = kappa_bootstrap((20, 5, 10, 15), seed=3, reps=1000)
    assert a == kappa_bootstrap((20, 5, 10, 15), seed=3, reps=1000)
    assert a[0] < 0.40 < a[1] and a[0] >= -1 and a[1] <= 1
    assert a != kappa_bootstrap((20, 5, 10, 15), seed=4, reps=1000)


def write_labels(path: Path, cells: tuple[int, int, int, int], judge: str = "j",
                 rubric: str | None = None) -> None:
    rows = []
    for (human, verdict), count in zip([(True, True), (True, False), (False, True), (False, False)],
                                       cells, strict=True):
        rows += [{"judge": judge, "rubric": rubric, "human": human, "judge_verdict": verdict}] * count
    with path.open("a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)


def test_cli_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.jsonl"
    write_labels(labels, (18, 2, 2, 18), "correct", "v1")
    assert main(["calibrate", "--labels", str(labels), "--min-kappa", "0.7"]) == 0
    assert main(["calibrate", "--labels", str(labels), "--min-kappa", "0.85"]) == 1
    write_labels(labels, (10, 2, 2, 10), "tone")  # kappa 0.67 but only 24 labels
    capsys.readouterr()
    assert main(["calibrate", "--labels", str(labels), "--min-kappa", "0.5", "--json"]) == 1
    gated = json.loads(capsys.readouterr().out)
    assert [g["problems"] for g in gated["groups"]] == [[], ["only 24 labels (need >= 30)"]]
    assert main(["calibrate", "--labels", str(labels), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    groups = {g["judge"]: g for g in doc["groups"]}
    assert groups["correct"]["confusion"] == {"tp": 18, "fn": 2, "fp": 2, "tn": 18}
    assert groups["tone"]["n"] == 24 and groups["correct"]["rubric"] == "v1"


def test_cli_bad_labels_exit_2(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"judge": "j", "human": "yes", "judge_verdict": true}\n')
    assert main(["calibrate", "--labels", str(labels)]) == 2


def test_fixture_labels_file() -> None:
    path = Path(__file__).resolve().parents[1] / "fixtures" / "labels" / "labels.jsonl"
    assert main(["calibrate", "--labels", str(path), "--min-kappa", "0.3"]) == 0
