"""Rescore over run directories (cache: never pays twice) and pairwise judging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import FAST, make_experiment
from rundirs import write_runs

from eval_harness.cli.main import main
from eval_harness.judges.pairwise import combine_orders, run_pairwise, summarize

CASES = [{"id": "c1", "input": {"q": "capital of France?"},
          "expected": {"answer": "Paris is the capital.", "entities": ["Paris"]}},
         {"id": "c2", "input": {"q": "capital of Peru?"},
          "expected": {"answer": "Lima is the capital.", "entities": ["Lima"]}}]
ANSWERS = {"m1": {"c1": "Paris", "c2": "Cusco"}, "m2": {"c1": "Lyon", "c2": "Lima"}}


def test_rescore_rewrites_records_and_uses_cache(tmp_path: Path, stub: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    judges = [{"name": "entities", "entity_coverage": True},
              {"name": "q", "prompt": "Rate {{ outputs.output }}", "score_range": [1, 5],
               "model": "openai:j"}]
    exp = make_experiment(tmp_path, judges, CASES)
    runs = tmp_path / "runs"
    eval_dir = write_runs(runs, exp, ANSWERS)
    argv = ["--config", str(tmp_path / "eval.yaml"), "--rescore", "--runs-dir", str(runs),
            "--no-judge-check", "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rescored"] == 4 and summary["cache_misses"] == 4
    assert len(stub.requests) == 4
    record = json.loads(next(eval_dir.glob("run-*m1*/cases/c2/record.json")).read_text())
    assert record["runner_note"] == "kept" and record["latency_s"] == 2.0
    assert record["scores"]["entities"]["value"] == 0.0
    assert record["scores"]["q"]["value"] == 1.0 and record["scores"]["q"]["judge_model"] == "openai:j"
    assert record["composite"] == 0.0 and "rescored_at" in record
    assert (eval_dir / "judge_cache.jsonl").exists()
    # second pass: everything from the cache, no new request
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["cache_hits"] == 4 and again["cache_misses"] == 0 and len(stub.requests) == 4
    assert not list(eval_dir.rglob("*.tmp"))


def test_rescore_skips_errored_runs(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "entities", "entity_coverage": True}], CASES)
    runs = tmp_path / "runs"
    eval_dir = write_runs(runs, exp, ANSWERS, status="errored")
    assert main(["--config", str(tmp_path / "eval.yaml"), "--rescore", "--runs-dir", str(runs)]) == 0
    record = json.loads(next(eval_dir.glob("*/cases/c1/record.json")).read_text())
    assert record["scores"] == {} and "rescored_at" not in record


def test_combine_orders_and_summary() -> None:
    assert combine_orders("A", "B") == ("win", False)
    assert combine_orders("B", "A") == ("loss", False)
    assert combine_orders("tie", "tie") == ("tie", False)
    assert combine_orders("A", "A") == ("tie", True)  # position bias
    rows = [{"verdict": v, "errored": False, "inconsistent": False} for v in
            ["win"] * 6 + ["tie"] * 2] + [{"verdict": None, "errored": True}]
    s = summarize(rows)
    assert (s["wins"], s["ties"], s["losses"], s["errored"]) == (6, 2, 0, 1)
    assert s["win_rate"] == pytest.approx(7 / 8)
    assert s["sign_test_p"] == pytest.approx(0.03125)  # DESIGN.md: 6 one-way flips


def test_run_pairwise_both_orders(tmp_path: Path, stub: Any) -> None:
    exp = make_experiment(tmp_path, [{"name": "entities", "entity_coverage": True},
                                     {"name": "pref", "pairwise": {"criteria": "accuracy"},
                                      "model": "claude-pair"}], CASES)
    eval_dir = write_runs(tmp_path / "runs", exp, ANSWERS)
    a_first = exp.conditions[0].levels["model"] == "m1"
    # c1: (a,b) -> A, (b,a) -> B: a wins on both orders; c2: stub default says "B" twice: tie
    stub.script.extend([{"verdict": {"reasoning": "r", "verdict": "A"}},
                        {"verdict": {"reasoning": "r", "verdict": "B"}}])
    doc = run_pairwise(exp, eval_dir, policy=FAST)
    pair = doc["judges"]["pref"]["pairs"][0]
    assert pair["a"] == exp.conditions[0].condition_id and a_first
    verdicts = {r["case_id"]: r for r in pair["results"]}
    assert verdicts["c1"]["verdict"] == "win" and verdicts["c1"]["orders"] == ["A", "B"]
    assert verdicts["c2"]["verdict"] == "tie" and verdicts["c2"]["inconsistent"]
    assert pair["summary"]["wins"] == 1 and pair["summary"]["inconsistent"] == 1
    written = json.loads((eval_dir / "pairwise.json").read_text())
    assert written["judges"]["pref"]["model"] == "anthropic:claude-pair"
    # both answers fenced, order swapped in the second call
    first, second = (r["body"]["messages"][0]["content"] for r in stub.requests[:2])
    assert first.index("Paris") < first.index("Lyon") and second.index("Lyon") < second.index("Paris")
    assert first.count("<<<BEGIN DATA") == 2


def test_no_pairwise_judge_writes_nothing(tmp_path: Path) -> None:
    exp = make_experiment(tmp_path, [{"name": "entities", "entity_coverage": True}], CASES)
    eval_dir = write_runs(tmp_path / "runs", exp, ANSWERS)
    assert run_pairwise(exp, eval_dir) == {} and not (eval_dir / "pairwise.json").exists()
