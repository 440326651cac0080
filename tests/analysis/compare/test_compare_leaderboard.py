"""Leaderboard ranking, Holm-corrected 'indistinguishable from the best', strata, saturation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.compare.leaderboard import build_leaderboard

Builder = Callable[..., pd.DataFrame]


def test_ranking_leader_and_saturation(make_frame: Builder) -> None:
    rng = np.random.default_rng(1)
    cases = [f"c{i:02d}" for i in range(30)]
    base = rng.uniform(0.3, 0.9, size=30)
    data = {
        ("best",): {c: [float(b)] for c, b in zip(cases, base, strict=True)},
        ("close",): {
            c: [float(b - 0.01 * ((i % 3) - 1))]
            for i, (c, b) in enumerate(zip(cases, base, strict=True))
        },
        ("worse",): {c: [float(b - 0.3)] for c, b in zip(cases, base, strict=True)},
    }
    for cond in data:  # one case everybody solves, one everybody fails
        data[cond]["solved"] = [1.0]
        data[cond]["hopeless"] = [0.0]
    tags = {c: {"tier": "easy" if i % 2 else "hard"} for i, c in enumerate(cases)}
    board = build_leaderboard(make_frame(data, case_tags=tags), stratify_by="tier")
    labels = [r["label"] for r in board["conditions"]]
    assert labels[-1] == "model=worse"
    assert board["conditions"][0]["indistinguishable_from_best"] is True
    by_label = {r["label"]: r for r in board["conditions"]}
    assert by_label["model=worse"]["indistinguishable_from_best"] is False
    assert by_label["model=worse"]["vs_leader"]["estimate"] < -0.25
    other = next(lab for lab in labels[:2] if lab != labels[0])
    assert by_label[other]["indistinguishable_from_best"] is True
    # Pass mark 0.5 (inclusive), one attempt each: re-derive saturation from the data.
    values = {c: [data[cond][c][0] for cond in data] for c in data[("best",)]}
    solved = sorted(c for c, v in values.items() if min(v) >= 0.5)
    failed = sorted(c for c, v in values.items() if max(v) < 0.5)
    assert "solved" in solved and "hopeless" in failed and len(solved) + len(failed) < 32
    assert board["saturation"]["solved_by_all"] == solved
    assert board["saturation"]["failed_by_all"] == failed
    assert board["n_cases"] == 32
    for row in board["conditions"]:
        lo, hi = row["quality"]["ci"]
        assert 0.0 <= lo <= row["quality"]["mean"] <= hi <= 1.0
    assert board["strata"]["tag"] == "tier"
    assert board["strata"]["strata"]["easy"]["n_cases"] == 15
    assert board["strata"]["strata"]["(untagged)"]["n_cases"] == 2


def test_ties_broken_by_cost_then_latency(make_frame: Builder) -> None:
    frame = make_frame({("aa",): {"x": [1.0], "y": [0.0]}, ("b",): {"x": [1.0], "y": [0.0]}})
    # The builder makes cost grow with the length of the level tuple's repr: "b" is cheaper.
    board = build_leaderboard(frame)
    assert [r["label"] for r in board["conditions"]] == ["model=b", "model=aa"]


def test_strata_and_excluded_cases(make_frame: Builder) -> None:
    frame = make_frame(
        {
            ("m1",): {"a": [1.0], "b": [0.5], "c": [None]},
            ("m2",): {"a": [0.5], "b": [0.5], "c": [1.0]},
        },
        case_tags={"a": {"tier": "easy"}, "b": {"tier": "hard"}},
    )
    board = build_leaderboard(frame, stratify_by="tier")
    assert board["excluded_cases"] == ["c"]
    strata = board["strata"]["strata"]
    assert set(strata) == {"easy", "hard"}
    m1 = board["conditions"][0]["condition_id"]
    assert strata["easy"]["conditions"][m1]["mean"] == pytest.approx(1.0)
