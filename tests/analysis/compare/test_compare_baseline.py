"""Baseline files: round trip, compact contents, validation, and comparison without run dirs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.compare.baseline import export_baseline, load_baseline
from eval_harness.analysis.compare.build import build_comparisons
from eval_harness.analysis.compare.gate import gate
from eval_harness.errors import ConfigError, UsageError

Builder = Callable[..., pd.DataFrame]


def _frame(make_frame: Builder) -> pd.DataFrame:
    frame = make_frame(
        {
            ("m1", 3): {"a": [1.0, 0.25], "b": [None, 0.5]},
            ("m2", 3): {"a": [0.75, 1.0], "b": [0.0, 1.0]},
        },
        factors=("model", "k"),
        case_tags={"a": {"tier": "easy"}, "b": {"tier": "hard"}},
    )
    frame["k"] = frame["k"].astype(object)  # the loader keeps YAML types in object columns
    frame.loc[frame.index[:4], "tokens"] = 123.0
    return frame


def _write_run_dirs(root: Path, frame: pd.DataFrame) -> None:
    for (run_id, case_id), _ in frame.groupby(["run_id", "case_id"]):
        case_dir = root / "demo" / str(run_id) / "cases" / str(case_id)
        case_dir.mkdir(parents=True)
        (case_dir / "input.json").write_text(json.dumps({"question": f"q-{case_id}"}))
        (case_dir / "outputs.json").write_text(json.dumps({"output": "SECRET-ANSWER"}))


@pytest.mark.parametrize("compact", [True, False])
def test_round_trip_gives_an_equal_frame(
    make_frame: Builder, tmp_path: Path, compact: bool
) -> None:
    frame = _frame(make_frame)
    _write_run_dirs(tmp_path / "runs", frame)
    path = tmp_path / "baseline.json"
    export_baseline(frame, path, compact=compact, runs_root=tmp_path / "runs")
    loaded = load_baseline(path)
    pd.testing.assert_frame_equal(loaded, frame, check_exact=True)
    assert loaded["k"].tolist()[0] == 3 and isinstance(loaded["k"].tolist()[0], int)
    for key in ("factors", "levels", "case_tags", "issues"):
        assert loaded.attrs[key] == frame.attrs[key]
    assert loaded.attrs["baseline"]["compact"] is compact
    text = path.read_text()
    assert ("SECRET-ANSWER" in text) is (not compact)
    doc = json.loads(text)
    assert doc["kind"] == "eval_harness.baseline" and doc["schema_version"] == 1
    sample = doc["runs"][0]["samples"][0]
    if compact:
        assert "input" not in sample and "outputs" not in sample
    else:
        assert sample["input"] == {"question": "q-a"}


def test_comparison_from_a_baseline_needs_no_run_dirs(make_frame: Builder, tmp_path: Path) -> None:
    old = make_frame({("m1",): {"a": [1, 1], "b": [1, 1], "c": [0, 0]}})
    path = tmp_path / "base.json"
    export_baseline(old, path, compact=True)
    new = make_frame({("m1",): {"a": [1, 1], "b": [0, 0], "c": [0, 0]}})
    doc = build_comparisons(new, baseline_frame=load_baseline(path))
    assert doc["baseline"]["path"] == str(path)
    # one case flipped once: only the strict gate (deterministic apps) fails on it
    assert gate(doc) == (False, [])
    failed, reasons = gate(doc, rule="strict")
    assert failed and reasons[0].endswith(": b")
    same = build_comparisons(old, baseline_frame=load_baseline(path))
    assert gate(same) == (False, [])


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        ({"kind": "something.else"}, "kind"),
        ({"schema_version": 2}, "schema_version 2"),
        ({"schema_version": True}, "schema_version"),
        ({"runs": [{"run_id": "r", "condition_id": "c", "samples": [{"judges": {}}]}]}, "case_id"),
    ],
)
def test_invalid_files_name_the_file(
    tmp_path: Path, make_frame: Builder, patch: dict, match: str
) -> None:
    path = tmp_path / "bad.json"
    doc = export_baseline(make_frame({("m1",): {"a": [1]}}), path)
    doc.update(patch)
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=match) as err:
        load_baseline(path)
    assert str(path) in err.value.one_line()


def test_unreadable_and_non_json(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        load_baseline(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="invalid JSON"):
        load_baseline(bad)
    # main: RecursionError / UnicodeDecodeError tracebacks for a user-supplied --baseline
    for name, raw, says in (("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
                            ("latin1.json", b'{"eval": "caf\xe9"}', "not UTF-8")):
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(ConfigError, match=says) as err:
            load_baseline(tmp_path / name)
        assert str(tmp_path / name) in err.value.one_line() and err.value.exit_code == 2


def test_nan_values_survive_as_null(make_frame: Builder, tmp_path: Path) -> None:
    frame = make_frame({("m1",): {"a": [None]}})
    path = tmp_path / "b.json"
    export_baseline(frame, path)
    assert "NaN" not in path.read_text()
    assert np.isnan(load_baseline(path)["value"]).all()
