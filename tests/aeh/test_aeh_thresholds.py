"""agent-eval-harness thresholds: ``max_error_rate`` and pairwise ``min_win_rate``."""

from __future__ import annotations

from eval_harness.judges.thresholds import evaluate_thresholds
from tests.judges.test_thresholds import frame


def test_max_error_rate_counts_errored_over_errored_plus_scored() -> None:
    results = evaluate_thresholds(frame(), {"judges": {"q": {"max_error_rate": 0.5}}})
    by_cid = {r["condition_id"]: r for r in results}
    assert by_cid["aaaaaaaaaaaa"]["value"] == 0.0 and by_cid["aaaaaaaaaaaa"]["passed"]
    assert by_cid["bbbbbbbbbbbb"]["value"] == 1.0 and not by_cid["bbbbbbbbbbbb"]["passed"]
    assert by_cid["bbbbbbbbbbbb"]["n_errored"] == 2


def test_min_win_rate_reads_the_pairwise_document() -> None:
    pairwise = {"judges": {"pref": {"pairs": [
        {"a": "aaaaaaaaaaaa", "b": "bbbbbbbbbbbb", "levels_a": {"model": "m1"},
         "summary": {"n": 4, "win_rate": 0.75, "errored": 0}},
        {"a": "bbbbbbbbbbbb", "b": "aaaaaaaaaaaa", "levels_a": {"model": "m2"},
         "summary": {"n": 4, "win_rate": 0.25, "errored": 0}}]}}}
    config = {"judges": {"pref": {"min_win_rate": 0.6}}}
    results = evaluate_thresholds(frame(), config, pairwise)
    assert [(r["condition_id"], r["passed"]) for r in results] == [
        ("aaaaaaaaaaaa", True), ("bbbbbbbbbbbb", False)]
    [missing] = evaluate_thresholds(frame(), config, None)  # no comparison: fails closed
    assert missing["value"] is None and not missing["passed"]
