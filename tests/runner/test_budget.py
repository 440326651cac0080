"""--max-spend and the per-cell limits against the billing stub ($0.01 per runner call)."""
from __future__ import annotations

from collections import Counter

from cost_helpers import records, write_cost_eval

from eval_harness.runner.budget import SpendTracker, cell_costs


def test_max_spend_stops_within_one_cell_and_resume_runs_no_cell_twice(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing, n_cases=20)  # 40 cells, $0.40 in all
    runs = str(tmp_path / "runs")
    code, _, err = cli("--config", str(cfg), "--runs-dir", runs, "--no-analysis",
                       "--concurrency", "4", "--max-spend", "0.155")
    assert code == 3, err
    assert "spend cap $0.15 reached" in err and "cells left" in err and "resume" in err
    first = records(tmp_path / "runs" / "cost")
    spent = sum(r["cost_usd"] for r in first.values())
    assert 0.155 - 0.01 <= spent <= 0.155 + 1e-9  # within one cell's cost, never past it
    assert len(billing.calls("runner")) == len(first) < 40
    code, _, err = cli("--config", str(cfg), "--runs-dir", runs, "--no-analysis",
                       "--concurrency", "4")
    assert code == 0, err
    assert len(records(tmp_path / "runs" / "cost")) == 40
    per_cell = Counter(str(e["body"]["messages"]) for e in billing.calls("runner"))
    assert len(per_cell) == 40 and set(per_cell.values()) == {1}  # no cell ran twice


def test_config_max_spend_and_per_cell_limits(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing, n_cases=2,
                          execution={"max_tokens_per_cell": 1200})  # each call uses 1500
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "a"), "--no-analysis")
    assert code == 4
    recs = records(tmp_path / "a" / "cost").values()
    assert {r["reason"] for r in recs} == {
        "over execution.max_tokens_per_cell: 1,500 tokens > 1,200"}
    cfg = write_cost_eval(tmp_path, billing, n_cases=2, execution={"max_cost_per_cell": 0.005})
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "b"), "--no-analysis")
    assert code == 4 and "over execution.max_cost_per_cell: $0.0100 > $0.0050" in err
    cfg = write_cost_eval(tmp_path, billing, n_cases=10, execution={"max_spend": 0.03})
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "c"), "--no-analysis")
    # each cell holds its worst case (~$0.012: 600 max_tokens and the request's input) until
    # it settles at $0.01: a third cell only fits if it cannot pass $0.03, and it could
    paid = [r for r in records(tmp_path / "c" / "cost").values() if not r.get("cache_hit")]
    assert code == 3 and len(paid) == 2


def test_tracker_reserves_worst_cases_and_runs_unknown_ones_alone() -> None:
    import threading

    stop = threading.Event()
    t = SpendTracker(0.05)
    held = [t.launch(stop, 0.02), t.launch(stop, 0.02)]
    assert all(held) and t.reserved == 0.04
    stop.set()  # no room for a third 0.02 while two hold 0.04: it would wait, then give up
    assert t.launch(stop, 0.02) is None
    stop.clear()
    t.settle(0.005, held=held[0])  # cheaper than held: its room comes back
    assert t.reserved == 0.02 and t.spent == 0.005
    third = t.launch(stop, 0.02)
    assert third is not None and t.reserved == 0.04
    t.settle(0.01, held=held[1]), t.settle(0.01, held=third)
    assert t.launch(stop, 0.03) is None and t.blocked == 0.03  # 0.025 + 0.03 > 0.05
    assert "spend cap $0.05 reached: $0.03 spent" in t.left_line(7)
    assert "the next cell may cost up to $0.0300" in t.left_line(7)
    alone = t.launch(stop, None)  # unknown worst case: alone, holding the dearest so far
    assert alone is not None and alone.alone and alone.amount == 0.01
    stop.set()
    assert t.launch(stop, 0.0) is None  # nothing launches beside an unbounded cell
    stop.clear()
    t.settle(0.02, held=alone)
    assert t.launch(stop, None) is None  # 0.045 + the dearest (0.02) > 0.05


def test_a_cell_dearer_than_its_worst_case_makes_every_later_cell_run_alone() -> None:
    import threading

    stop = threading.Event()
    t = SpendTracker(1.0)
    first = t.launch(stop, 0.01)
    t.settle(0.02, held=first)  # a wrong price: past its worst case
    assert t.bounds_broken
    held = t.launch(stop, 0.01)
    assert held is not None and held.alone


def test_cell_costs_count_cache_hits_as_saved() -> None:
    rec = {"cost_usd": 0.01, "cache_hit": True,
           "scores": {"a": {"cost_usd": 0.002, "cache_hit": True}, "b": {"cost_usd": 0.003},
                      "c": {"value": True}}}
    assert cell_costs(rec) == (0.003, 0.012)
    assert cell_costs({"cost_usd": None, "scores": {}}) == (None, 0.0)
    assert cell_costs({"cost_usd": 0.01, "cache_hit": True}) == (0.0, 0.01)


def test_cache_hits_do_not_count_against_the_cap(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing)
    assert cli("--config", str(cfg), "--runs-dir", str(tmp_path / "a"), "--no-analysis")[0] == 0
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "b"), "--no-analysis",
                       "--max-spend", "0.001")  # less than one call: only hits fit under it
    assert code == 0, err
    assert all(r["cache_hit"] for r in records(tmp_path / "b" / "cost").values())
    assert "$0.00 spent" in err and "6 of 6 calls from cache, $0.06 saved" in err
