"""Per-sample pass/fail and per-(condition, case) verdicts."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.compare.verdicts import VerdictRule, case_verdicts, sample_table
from eval_harness.errors import UsageError

Builder = Callable[..., pd.DataFrame]


def _verdicts(frame: pd.DataFrame, rule: VerdictRule | None = None) -> dict[str, str]:
    table = case_verdicts(sample_table(frame, rule))
    return dict(zip(table["case_id"], table["verdict"], strict=True))


def test_passed_failed_flaky_errored(make_frame: Builder) -> None:
    frame = make_frame(
        {("m1",): {"a": [1, 1, 1], "b": [1, 0, 1], "c": [0, 0, None], "d": [None, None, None]}}
    )
    assert _verdicts(frame) == {"a": "passed", "b": "flaky", "c": "failed", "d": "errored"}
    table = case_verdicts(sample_table(frame)).set_index("case_id")
    assert table.loc["c", "n_errored"] == 1 and table.loc["c", "n_usable"] == 2
    assert table.loc["b", "pass_rate"] == pytest.approx(2 / 3)
    assert np.isnan(table.loc["d", "pass_rate"])


def test_pass_mark_is_inclusive_and_configurable(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [0.5], "b": [0.49], "c": [0.8]}})
    assert _verdicts(frame) == {"a": "passed", "b": "failed", "c": "passed"}
    assert _verdicts(frame, VerdictRule(pass_mark=0.8)) == {
        "a": "failed",
        "b": "failed",
        "c": "passed",
    }
    with pytest.raises(UsageError):
        VerdictRule(pass_mark=1.5)


def test_judge_rule_uses_named_gate_judges(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [1.0], "b": [0.3]}}, judges=("correct", "style"))
    # Make "style" fail on case a only: the composite stays 1.0 but the gate judge fails.
    frame.loc[(frame["case_id"] == "a") & (frame["judge"] == "style"), "normalized"] = 0.0
    assert _verdicts(frame) == {"a": "passed", "b": "failed"}
    assert _verdicts(frame, VerdictRule(judges=("style",))) == {"a": "failed", "b": "failed"}
    assert _verdicts(frame, VerdictRule(judges=("correct",))) == {"a": "passed", "b": "failed"}


def test_errored_composite_is_never_a_fail(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [1.0, 0.0]}})
    # Replication 2: a judge errored, so the composite is errored (NaN), the run itself was ok.
    mask = (frame["replication"] == 2) & (frame["judge"] == "composite")
    frame.loc[mask, ["value", "errored"]] = [np.nan, True]
    samples = sample_table(frame)
    assert samples["errored"].tolist() == [False, True]
    assert np.isnan(samples["passed"].iloc[1])
    assert _verdicts(frame) == {"a": "passed"}


def test_missing_composite_row_falls_back_to_judge_mean(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [1.0], "b": [0.0]}}, judges=("x", "y"))
    frame = frame[frame["judge"] != "composite"]
    frame.loc[(frame["case_id"] == "a") & (frame["judge"] == "y"), "normalized"] = 0.2
    samples = sample_table(frame).set_index("case_id")
    assert samples.loc["a", "composite"] == pytest.approx(0.6)
    assert _verdicts(frame) == {"a": "passed", "b": "failed"}


def test_unavailable_composite_falls_back_to_booleans_or_unscored(make_frame: Builder) -> None:
    from eval_harness.analysis.compare.build import build_comparisons
    from eval_harness.analysis.compare.gate import gate

    frame = make_frame({("m1",): {"a": [1.0], "b": [0.0]}, ("m2",): {"a": [0.0], "b": [0.0]}})
    # Composite not computable (no score range) but not errored: NaN without the flag.
    frame.loc[frame["judge"] == "composite", "value"] = np.nan
    assert _verdicts(frame[frame["condition_id"] == frame["condition_id"].iloc[0]]) == {
        "a": "unscored",
        "b": "unscored",
    }
    with_bool = frame.copy()
    with_bool.loc[with_bool["judge"] == "correct", "kind"] = "boolean"
    doc = build_comparisons(with_bool)
    assert doc["comparisons"][0]["regressed"] == ["a"]
    doc = build_comparisons(frame)
    comp = doc["comparisons"][0]
    assert comp["unscored"] == ["a", "b"] and comp["errored"] == []
    assert gate(doc) == (False, [])


def test_join_unique_sorts_dedups_and_skips_empty() -> None:
    from eval_harness.analysis.compare.verdicts import join_unique

    groups = np.array([0, 0, 0, 2, 2, 3])
    items = np.array(["b", "a", "b", "", "c", ""], dtype=object)
    assert join_unique(groups, 4, items).tolist() == ["a,b", "", "c", ""]
    # more than 62 distinct items: the per-group join path gives the same answer
    many = np.array([f"j{i:03d}" for i in range(70)] * 2, dtype=object)
    grp = np.repeat([0, 1], 70)
    out = join_unique(grp[::-1].copy(), 2, many)
    assert out[0] == out[1] == ",".join(f"j{i:03d}" for i in range(70))


def test_verdicts_of_a_tagged_frame_match_a_per_group_reference(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [1, 0, None], "b": [0.2, 0.9, 0.7]},
                        ("m2",): {"a": [1, 1, 1], "b": [None, None, None]}})
    frame.attrs["case_tags"] = {"a": {"tier": "easy"}, "b": {"tier": "hard"}}
    samples = sample_table(frame)
    cases = case_verdicts(samples)
    for (cid, case), g in samples.groupby(["condition_id", "case_id"], sort=False):
        row = cases[(cases["condition_id"] == cid) & (cases["case_id"] == case)].iloc[0]
        usable = g[g["passed"].notna()]
        assert row["n_attempts"] == len(g) and row["n_usable"] == len(usable)
        assert row["n_pass"] == int(usable["passed"].sum())
        judges = sorted({j for v in usable["judges"] for j in v.split(",") if j})
        assert row["judges"] == ",".join(judges)


@pytest.mark.parametrize("max_code", [2**62, 7])
def test_group_codes_number_groups_like_groupby_ngroup(
        monkeypatch: pytest.MonkeyPatch, max_code: int) -> None:
    from eval_harness.analysis.compare import verdicts

    # a small bound forces the compression path between keys
    monkeypatch.setattr(verdicts, "_MAX_CODE", max_code)
    rng = np.random.default_rng(4)
    n = 2_000
    frame = pd.DataFrame({
        "a": pd.Series(rng.choice(["x", "y", None], size=n), dtype="str"),
        "b": rng.integers(0, 5, size=n),
        "c": pd.Series(rng.choice(["p", "q", "r", None], size=n), dtype=object),
        "d": rng.choice([1.5, np.nan, 2.5], size=n),
    })
    keys = ["a", "b", "c", "d"]
    expected = frame.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    assert np.array_equal(verdicts.group_codes(frame, keys), expected)


def test_sample_table_takes_first_non_missing_values_per_attempt(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [1.0, 0.0]}}, judges=("x", "y"))
    # replication 1: the hash / latency are only on the second row of the attempt
    rep1 = frame.index[frame["replication"] == 1]
    frame["case_hash"] = frame["case_hash"].astype(object)
    frame.loc[rep1[0], ["case_hash", "latency_s"]] = [None, np.nan]
    frame.loc[rep1[1], ["case_hash", "latency_s"]] = ["h1", 2.5]
    samples = sample_table(frame).set_index("replication")
    assert samples.loc[1, "case_hash"] == "h1" and samples.loc[1, "latency_s"] == 2.5
    assert samples.loc[1, "judges"] == "x,y"
    assert samples["passed"].tolist() == [1.0, 0.0]
