"""Loader: text columns of the tidy frame are categoricals that behave as the strings
they replace (lexical sort order, missing values, mixed types left alone), and the
consumers that fill or export them keep their output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rundir_writer import write_native

from eval_harness.analysis.compare.verdicts import sample_table
from eval_harness.analysis.loading.tidy_frame import _categorical, load_runs
from tests.conftest import run_cli

DATA = {
    ("zeta",): {"c10": [{"ok": True}], "c2": [{"ok": False}]},
    ("alpha",): {"c10": [{"ok": False}], "c2": [{"ok": True}]},
    ("Mid",): {"c10": [{"ok": True}], "c2": [{"ok": True}]},
}
TEXT = ["eval", "run_id", "condition_id", "model", "case_id", "judge", "kind",
        "case_status", "case_hash"]


def test_text_columns_are_categoricals_with_sorted_categories(tmp_path: Path) -> None:
    write_native(tmp_path, DATA, ["model"])
    df = load_runs(tmp_path)
    for c in TEXT:
        assert isinstance(df[c].dtype, pd.CategoricalDtype), c
        cats = list(df[c].cat.categories)
        assert cats == sorted(cats), c
        assert set(cats) == set(df[c].dropna().astype(str)), c  # no unused category
    assert list(df["model"].cat.categories) == ["Mid", "alpha", "zeta"]  # code-point order
    # sorting by the column is text order, as with plain strings
    assert df.sort_values("case_id")["case_id"].astype(str).tolist() == sorted(
        df["case_id"].astype(str).tolist())
    assert (df["judge"] == "composite").sum() == 6
    for col in ("replication", "value", "normalized", "latency_s"):
        assert not isinstance(df[col].dtype, pd.CategoricalDtype)


def test_non_text_levels_stay_as_they_were(tmp_path: Path) -> None:
    write_native(tmp_path, {(3, 0.5): {"c": [{"s": 1.0}]}, (10, 0.7): {"c": [{"s": 2.0}]}},
                 ["n", "temp"], ranges={"s": [0, 2]})
    df = load_runs(tmp_path)
    assert {type(v) for v in df["n"]} == {int}
    assert {type(v) for v in df["temp"]} == {float}
    assert not isinstance(df["temp"].dtype, pd.CategoricalDtype)


@pytest.mark.parametrize("values, index, expected", [
    (["b", "a", "b", "c"], [0, 1, 2, 3, 0], ["b", "a", "b", "c", "b"]),
    (["b", None, "a"], [0, 1, 2, 1], ["b", None, "a", None]),
    (["x", float("nan")], [1, 0], [None, "x"]),
])
def test_categorical_of_strings(values: list, index: list, expected: list) -> None:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    cat = _categorical(arr, np.asarray(index))
    assert cat is not None
    got = [None if pd.isna(v) else v for v in cat]
    assert got == expected
    assert list(cat.categories) == sorted({v for v in expected if v is not None})


@pytest.mark.parametrize("values", [[1, 2], ["a", 1], [True, "b"], [None, None]])
def test_mixed_or_non_text_values_are_not_categorical(values: list) -> None:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    assert _categorical(arr, np.arange(len(values))) is None


def test_many_categories_get_wider_codes() -> None:
    arr = np.array([f"c{i:05d}" for i in range(40_000)], dtype=object)
    cat = _categorical(arr, np.arange(40_000)[::-1])
    assert cat is not None and cat.codes.dtype == np.int32
    assert cat[0] == "c39999" and cat[-1] == "c00000"


def test_missing_case_hash_in_a_categorical_becomes_empty_text() -> None:
    frame = pd.DataFrame({
        "condition_id": pd.Categorical(["a", "a", "b", "b"]),
        "run_id": pd.Categorical(["r1", "r1", "r2", "r2"]),
        "replication": [1, 1, 1, 1],
        "case_id": pd.Categorical(["c1", "c1", "c1", "c1"]),
        "judge": pd.Categorical(["ok", "composite", "ok", "composite"]),
        "value": [1.0, 1.0, 0.0, 0.0],
        "normalized": [1.0, 1.0, 0.0, 0.0],
        "kind": pd.Categorical(["boolean", "composite", "boolean", "composite"]),
        "errored": [False] * 4,
        "case_status": pd.Categorical(["ok"] * 4),
        "case_hash": pd.Categorical(["h1", "h1", None, None]),
        "latency_s": [1.0] * 4, "cost_usd": [0.0] * 4,
    })
    samples = sample_table(frame)
    assert samples["case_hash"].tolist() == ["h1", ""]
    assert samples["passed"].tolist() == [1.0, 0.0]


def test_parquet_export_holds_plain_strings(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")  # a dev dependency: always there in the test env
    write_native(tmp_path / "runs", DATA, ["model"])
    out = tmp_path / "f.parquet"
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                           str(tmp_path / "o"), "--export-parquet", str(out))
    assert code in (0, 1), err
    back = pd.read_parquet(out)
    frame = load_runs(tmp_path / "runs")
    for c in TEXT:
        assert not isinstance(back[c].dtype, pd.CategoricalDtype), c
        assert back[c].fillna("").astype(str).tolist() == frame[c].astype(object).fillna(
            "").astype(str).tolist(), c
    assert len(back) == len(frame)
