"""build_comparisons: statuses, regressions, the overall test, the JSON document, the gate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from eval_harness.analysis.compare.build import build_comparisons, parse_reference, select_reference
from eval_harness.analysis.compare.files import write_comparisons
from eval_harness.analysis.compare.gate import gate
from eval_harness.analysis.compare.rows import plain_comparisons
from eval_harness.errors import AnalysisError, UsageError

Builder = Callable[..., pd.DataFrame]


def _two_models(make_frame: Builder, **kw: Any) -> pd.DataFrame:
    return make_frame(
        {
            ("m1",): {
                "a": [1, 1, 1],
                "b": [1, 0, 1],
                "c": [0, 0, 0],
                "d": [1, 1, 1],
                "e": [1, 1, 1],
            },
            ("m2",): {
                "a": [1, 0, 1],
                "b": [0, 0, 0],
                "c": [1, 1, 1],
                "d": [1, 1, 1],
                "f": [1, 1, 1],
            },
        },
        **kw,
    )


def test_reference_comparison_lists_and_flags(make_frame: Builder) -> None:
    doc = build_comparisons(_two_models(make_frame))
    json.dumps(doc, allow_nan=False)  # strictly JSON-serialisable
    assert doc["schema_version"] == 1 and doc["reference"]["levels"] == {"model": "m1"}
    (comp,) = doc["comparisons"]
    assert comp["kind"] == "reference" and comp["candidate"]["levels"] == {"model": "m2"}
    assert comp["regressed"] == ["a", "b"]  # passed -> flaky, flaky -> failed
    assert comp["improved"] == ["c"]
    assert comp["improved_significant"] == []  # 0/3 -> 3/3: Fisher p = 0.1
    assert comp["new"] == ["f"] and comp["removed"] == ["e"]
    assert comp["n_cases_compared"] == 4
    rows = {r["case_id"]: r for r in comp["cases"]}
    assert rows["c"]["fisher_p"] == pytest.approx(0.1)
    assert rows["a"]["reference"]["wilson_ci"] == pytest.approx([0.4385029682, 1.0])
    assert comp["overall"]["method"] == "exact"
    assert comp["overall"]["statistic"] == pytest.approx((-1 / 3 - 2 / 3 + 1 + 0) / 4)
    assert comp["composite"]["n_cases"] == 4
    assert comp["verdict"] == "mixed"  # not significant overall; cases moved both ways


def test_modified_and_errored_cases_are_never_regressions(make_frame: Builder) -> None:
    new = make_frame(
        {("m1",): {"a": [0, 0], "b": [None, None], "c": [1, 1]}}, case_hash={"a": "changed"}
    )
    old = make_frame({("m1",): {"a": [1, 1], "b": [1, 1], "c": [1, 1]}})
    doc = build_comparisons(new, baseline_frame=old)
    (comp,) = doc["comparisons"]
    assert comp["kind"] == "baseline"
    assert comp["modified"] == ["a"] and comp["errored"] == ["b"]
    assert comp["errored_candidate"] == ["b"]
    assert comp["regressed"] == [] and comp["n_cases_compared"] == 1
    failed, reasons = gate(doc)
    assert failed and len(reasons) == 1 and "errored" in reasons[0] and "b" in reasons[0]


def test_judge_set_change_marks_modified(make_frame: Builder) -> None:
    new = make_frame({("m1",): {"a": [1]}}, judges=("correct", "style"))
    old = make_frame({("m1",): {"a": [1]}}, judges=("correct",))
    (comp,) = build_comparisons(new, baseline_frame=old)["comparisons"]
    assert comp["modified"] == ["a"]


def test_gate_strict_vs_cases_vs_overall(make_frame: Builder) -> None:
    old = make_frame({("m1",): {f"c{i}": [1] * 10 for i in range(8)}})
    # c0 drops to 0/10 (Fisher p = 1.08e-5, Holm over 8 cases 8.7e-5), c1 to 9/10 (p = 1):
    # only c0 is significant.
    data = {f"c{i}": [1] * 10 for i in range(8)}
    data["c0"] = [0] * 10
    data["c1"] = [1] * 9 + [0]
    new = make_frame({("m1",): data})
    doc = build_comparisons(new, baseline_frame=old)
    (comp,) = doc["comparisons"]
    assert comp["regressed"] == ["c0", "c1"] and comp["regressed_significant"] == ["c0"]
    row = next(r for r in comp["cases"] if r["case_id"] == "c0")
    assert row["fisher_p_adjusted"] == pytest.approx(8 * row["fisher_p"], rel=1e-12)
    failed, reasons = gate(doc, fail_on_regression=True, rule="strict")
    assert failed and "c0, c1" in reasons[0] and "strict" in reasons[0]
    failed, reasons = gate(doc, fail_on_regression=True, significant_only=True)
    # one Holm family: the overall test and the 8 cases (c0: 9 × 1.08e-5 < 0.05)
    assert failed and reasons[0].endswith(": c0") and "Holm over 9 test(s)" in reasons[0]
    # default: the overall one-sided test only (c0's 10 -> 0 alone makes it significant)
    failed, reasons = gate(doc, fail_on_regression=True)
    assert failed and len(reasons) == 1 and "significant overall drop" in reasons[0]
    off, reasons_off = gate(doc, fail_on_regression=False, rule="strict")
    assert not off and reasons_off


def test_unchanged_rerun_passes_the_gate(make_frame: Builder) -> None:
    data = {"a": [1, 1], "b": [0, 0], "c": [1, 0]}
    doc = build_comparisons(make_frame({("m1",): data}), baseline_frame=make_frame({("m1",): data}))
    (comp,) = doc["comparisons"]
    assert comp["verdict"] == "unchanged" and comp["overall"]["p"] == 1.0
    assert gate(doc) == (False, [])


def test_significant_overall_drop_gates_without_case_regressions(make_frame: Builder) -> None:
    # 8 cases flaky 3/4 -> flaky 1/4: no verdict changes, no single case significant,
    # but the stratified test sees the drop.
    old = make_frame({("m1",): {f"c{i}": [1, 1, 1, 0] for i in range(8)}})
    new = make_frame({("m1",): {f"c{i}": [1, 0, 0, 0] for i in range(8)}})
    doc = build_comparisons(new, baseline_frame=old)
    (comp,) = doc["comparisons"]
    assert comp["regressed"] == [] and comp["regressed_significant"] == []
    assert comp["significant_drop"] and comp["overall"]["p"] < 0.05
    failed, reasons = gate(doc, significant_only=True)
    assert failed and "significant overall drop" in reasons[0]


def test_single_conditions_with_different_ids_are_paired(make_frame: Builder) -> None:
    old = make_frame({("m1",): {"a": [1]}})
    new = make_frame({("m9",): {"a": [0]}})
    doc = build_comparisons(new, baseline_frame=old)
    assert doc["baseline"]["note"] and len(doc["comparisons"]) == 1
    assert doc["comparisons"][0]["regressed"] == ["a"]


def test_reference_selection(make_frame: Builder) -> None:
    frame = make_frame(
        {("m1", "low"): {"a": [1]}, ("m1", "high"): {"a": [1]}, ("m2", "low"): {"a": [0]}},
        factors=("model", "effort"),
    )
    assert parse_reference("model=m2, effort=low") == {"model": "m2", "effort": "low"}
    ref = select_reference(frame, parse_reference("model=m2,effort=low"))
    doc = build_comparisons(frame, reference={"model": "m2", "effort": "low"})
    assert doc["reference"]["condition_id"] == ref
    assert len(doc["comparisons"]) == 2
    assert build_comparisons(frame)["reference"]["levels"] == {"model": "m1", "effort": "low"}
    with pytest.raises(UsageError, match="matches 2 conditions"):
        select_reference(frame, {"model": "m1"})
    with pytest.raises(UsageError, match="unknown factor"):
        select_reference(frame, {"size": "xl"})
    with pytest.raises(UsageError):
        parse_reference("model")


def test_cluster_robust_se_from_case_tag(make_frame: Builder) -> None:
    tags = {c: {"cluster": "g1" if c in "ab" else "g2"} for c in "abcd"}
    frame = make_frame(
        {
            ("m1",): {c: [0.9] for c in "abcd"},
            ("m2",): {"a": [0.5], "b": [0.7], "c": [0.9], "d": [0.6]},
        },
        case_tags=tags,
    )
    comp = build_comparisons(frame)["comparisons"][0]["composite"]
    assert comp["cluster"]["method"] == "CR1" and comp["cluster"]["n_clusters"] == 2
    assert comp["estimate"] == pytest.approx((-0.4 - 0.2 + 0 - 0.3) / 4)
    assert comp["cluster"]["df"] == 1


def test_bad_inputs(make_frame: Builder) -> None:
    frame = _two_models(make_frame)
    with pytest.raises(UsageError):
        build_comparisons(frame, alpha=1.5)
    with pytest.raises(AnalysisError):
        build_comparisons(frame.iloc[0:0])


def test_cyclic_gc_is_paused_while_building_and_restored(
        make_frame: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from eval_harness.analysis.compare import build

    seen: list[bool] = []
    real = build.compare_sides

    def spy(*args: Any, **kwargs: Any) -> dict[str, Any]:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "compare_sides", spy)
    assert gc.isenabled()
    doc = build_comparisons(_two_models(make_frame))
    assert seen == [False] and gc.isenabled()
    assert doc["comparisons"][0]["regressed"]
    # an error inside restores it too
    monkeypatch.setattr(build, "compare_sides", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        build_comparisons(_two_models(make_frame))
    assert gc.isenabled()


def test_row_columns_give_the_same_rows_as_plain_lists(make_frame: Builder) -> None:
    frame = make_frame({("m1",): {"a": [1, 0], "b": [1, 1], "c": [0, 0]},
                        ("m2",): {"a": [0, 0], "b": [1, 1], "d": [1, 1]},
                        ("m3",): {"a": [1, 1], "b": [0, 1], "c": [None, None]}})
    plain = build_comparisons(frame)
    columns = build_comparisons(frame, row_columns=True)
    assert all(isinstance(c["cases"], list) for c in plain["comparisons"])
    assert not any(isinstance(c["cases"], list) for c in columns["comparisons"])
    assert json.dumps(plain_comparisons(columns)) == json.dumps(plain)  # same keys, order, values
    statuses = {r["status"] for c in plain["comparisons"] for r in c["cases"]}
    assert {"compared", "new", "removed"} <= statuses
    for p, c in zip(plain["comparisons"], columns["comparisons"], strict=True):
        rows = c["cases"]
        assert rows == p["cases"] and len(rows) == len(p["cases"])
        assert rows[-1] == p["cases"][-1] and rows[1:3] == p["cases"][1:3]
        rows[0]["status"] = "changed by a caller"  # each access builds a fresh dict
        assert rows[0] == p["cases"][0]
        with pytest.raises(IndexError):
            rows[len(rows)]


def test_rows_file_from_columns_is_byte_identical(make_frame: Builder, tmp_path: Path) -> None:
    # comparisons.cases.jsonl written from CaseRows (encoded from the columns) and from
    # the plain row dicts: the same bytes, for every status, missing sides, NaN
    # composites and ids that need escaping
    frame = make_frame({("m1",): {"a": [1, 0], "b": [1, 1], "c": [0, 0], "é\n\"q\"": [0.5, 1]},
                        ("m2",): {"a": [0, 0], "b": [1, None], "d": [1, 1], "é\n\"q\"": [1, 1]},
                        ("m3",): {"a": [None, None], "b": [0, 1], "c": [0.25, 0.75]}},
                       case_hash={"c": "h-c"})
    plain = build_comparisons(frame)
    columns = build_comparisons(frame, row_columns=True)
    write_comparisons(tmp_path / "plain", plain)
    write_comparisons(tmp_path / "columns", columns)
    for name in ("comparisons.json", "comparisons.cases.jsonl"):
        assert (tmp_path / "columns" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    statuses = {json.loads(line)["status"] for line in
                (tmp_path / "plain" / "comparisons.cases.jsonl").read_text().splitlines()}
    assert {"compared", "new", "removed", "errored"} <= statuses
