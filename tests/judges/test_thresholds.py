"""Thresholds per condition over a hand-built tidy frame."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from eval_harness.judges.thresholds import evaluate_thresholds


def frame() -> pd.DataFrame:
    rows = []
    # condition A: composite 1, 1, 0.5, errored; judge ok: T, T, F; judge q (1-5): 5, 4, 2
    # condition B: everything errored for judge q
    for cid, model, comps, oks, qs in (
        ("aaaaaaaaaaaa", "m1", [1.0, 1.0, 0.5, None], [1.0, 1.0, 0.0], [5.0, 4.0, 2.0]),
        ("bbbbbbbbbbbb", "m2", [0.2, 0.4], [0.0, 1.0], [None, None]),
    ):
        for i, c in enumerate(comps):
            rows.append({"condition_id": cid, "model": model, "case_id": f"c{i}", "judge": "composite",
                         "value": math.nan if c is None else c, "kind": "composite",
                         "errored": c is None, "normalized": math.nan if c is None else c})
        for i, v in enumerate(oks):
            rows.append({"condition_id": cid, "model": model, "case_id": f"c{i}", "judge": "ok",
                         "value": v, "kind": "boolean", "errored": False, "normalized": v})
        for i, v in enumerate(qs):
            rows.append({"condition_id": cid, "model": model, "case_id": f"c{i}", "judge": "q",
                         "value": math.nan if v is None else v, "kind": "numeric",
                         "errored": v is None,
                         "normalized": math.nan if v is None else (v - 1) / 4})
    df = pd.DataFrame(rows)
    df.attrs["factors"] = ["model"]
    return df


def test_thresholds_per_condition() -> None:
    config = {"min_pass_rate": 0.9, "min_mean": 0.8,
              "judges": {"ok": {"min_pass_rate": 0.6}, "q": {"min_mean": 3.5, "min_pass_rate": 0.6,
                                                              "pass_score": 4}}}
    got = {(r["condition_id"][0], r["target"], r["metric"]): r
           for r in evaluate_thresholds(frame(), config)}
    a = got[("a", "composite", "min_mean")]
    assert a["value"] == pytest.approx(2.5 / 3) and a["passed"] and a["n_errored"] == 1
    assert a["levels"] == {"model": "m1"}
    assert got[("a", "composite", "min_pass_rate")]["value"] == pytest.approx(1.0)  # 0.5 >= 0.5
    assert got[("a", "ok", "min_pass_rate")]["value"] == pytest.approx(2 / 3)
    assert got[("a", "q", "min_mean")]["value"] == pytest.approx(11 / 3)
    assert got[("a", "q", "min_pass_rate")]["value"] == pytest.approx(2 / 3)
    assert got[("b", "composite", "min_pass_rate")]["value"] == 0.0
    assert not got[("b", "composite", "min_mean")]["passed"]
    # every sample errored: no value and a failure, never a pass
    b_q = got[("b", "q", "min_mean")]
    assert b_q["value"] is None and not b_q["passed"] and b_q["n_errored"] == 2


def test_no_thresholds_no_results() -> None:
    assert evaluate_thresholds(frame(), None) == []
    assert evaluate_thresholds(frame(), {}) == []
