"""Design check: complete vs excluded cases, dropped factors, balance, the cases × cells array."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from eval_harness.analysis.anova.design_check import case_cell_array, design_check


def _frame(rows: list[dict], factors: list[str], levels: dict) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["judge"] = "composite"
    df["errored"] = df.get("errored", False)
    df.attrs["factors"] = factors
    df.attrs["levels"] = levels
    return df


def _grid(n_cases: int, reps: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        {"case_id": f"c{i}", "a": a, "b": b, "replication": r, "value": float(rng.normal())}
        for i in range(n_cases) for a in ("x", "y") for b in (1, 2, 3) for r in range(1, reps + 1)
    ]


def test_array_matches_a_groupby_of_cell_means() -> None:
    rows = _grid(7, 3)
    df = _frame(rows, ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]})
    y, cases, excluded, _ = case_cell_array(df, ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]})
    ref = df.groupby(["case_id", "a", "b"])["value"].mean()
    assert y.shape == (7, 2, 3) and not excluded
    for i, c in enumerate(cases):
        for (ia, a), (ib, b) in itertools.product(enumerate("xy"), enumerate([1, 2, 3])):
            assert np.isclose(y[i, ia, ib], ref.loc[(c, a, b)])


def test_incomplete_cases_are_listed_with_their_missing_cells() -> None:
    rows = [r for r in _grid(5, 1) if not (r["case_id"] == "c3" and r["a"] == "y" and r["b"] in (2, 3))]
    rows.append({"case_id": "c4", "a": "x", "b": 1, "replication": 2, "value": np.nan})
    dc = design_check(_frame(rows, ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]}))
    assert dc.y.shape == (4, 2, 3)
    assert dc.case_ids == ["c0", "c1", "c2", "c4"]
    assert [e["case_id"] for e in dc.excluded_cases] == ["c3"]
    assert dc.excluded_cases[0]["missing"] == [{"a": "y", "b": 2}, {"a": "y", "b": 3}]
    assert not dc.balanced


def test_errored_samples_do_not_fill_a_cell() -> None:
    rows = _grid(3, 1)
    for r in rows:
        if r["case_id"] == "c0" and r["a"] == "x" and r["b"] == 1:
            r["errored"], r["value"] = True, np.nan
    df = _frame(rows, ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]})
    df["errored"] = df["errored"].eq(True)  # missing → False, without pandas 2.x's fillna downcast warning
    dc = design_check(df)
    assert [e["case_id"] for e in dc.excluded_cases] == ["c0"]


def test_single_level_factor_is_dropped_with_a_note() -> None:
    rows = [r for r in _grid(4, 1) if r["a"] == "x"]
    dc = design_check(_frame(rows, ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]}))
    assert dc.kept == ["b"]
    assert dc.dropped[0]["factor"] == "a" and "1 observed level" in dc.dropped[0]["reason"]
    assert any("'a' dropped" in n for n in dc.notes)
    assert dc.y.shape == (4, 3)


def test_unequal_replications_are_not_balanced() -> None:
    rows = _grid(4, 2)
    rows = [r for r in rows if not (r["case_id"] == "c1" and r["replication"] == 2 and r["b"] == 3)]
    dc = design_check(_frame(rows, ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]}))
    assert (dc.replications, dc.replications_min, dc.balanced) == (2, 1, False)
    assert not dc.excluded_cases
    complete = design_check(_frame(_grid(4, 2), ["a", "b"], {"a": ["x", "y"], "b": [1, 2, 3]}))
    assert complete.balanced and complete.replications == 2


def test_level_order_follows_the_matrix_and_types_stay_apart() -> None:
    rows = [{"case_id": f"c{i}", "f": lv, "value": float(i + j)}
            for i in range(3) for j, lv in enumerate([True, 1, "1"])]
    dc = design_check(_frame(rows, ["f"], {"f": ["1", 1, True]}))
    assert dc.levels["f"] == ["1", 1, True]
    np.testing.assert_allclose(dc.y[:, 0] - dc.y[:, 2], [2.0, 2.0, 2.0])


def test_a_level_without_usable_observations_is_named() -> None:
    rows = [{**r, "errored": False} for r in _grid(6, 1) if r["b"] != 3]
    rows += [{"case_id": f"c{i}", "a": a, "b": 3, "replication": 1, "value": np.nan,
              "errored": True} for i in range(6) for a in ("x", "y")]
    df = _frame(rows, ["a", "b"], {"a": ["x", "y", "z"], "b": [1, 2, 3]})
    dc = design_check(df)
    assert dc.levels["b"] == [1, 2] and dc.levels["a"] == ["x", "y"]
    notes = " | ".join(dc.notes)
    assert "level 3 of factor 'b' has no usable observations (all 12 sample(s)" in notes
    assert "level 'z' of factor 'a' has no usable observations (no samples" in notes
