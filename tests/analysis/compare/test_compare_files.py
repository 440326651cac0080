"""comparisons.json summary + comparisons.cases.jsonl rows: layout, round trip, version 1."""

from __future__ import annotations

import json
from pathlib import Path

from eval_harness.analysis.compare.files import (
    CASES_FILE,
    read_comparisons,
    split_comparisons,
    write_comparisons,
)
from tests.conftest import FIXTURES, run_cli


def _doc() -> dict:
    rows = [{"case_id": f"c{i}", "status": "compared", "fisher_p": 0.5 + i / 10} for i in range(3)]
    return {"schema_version": 1, "kind": "eval_harness.comparisons", "alpha": 0.05,
            "comparisons": [
                {"kind": "reference", "reference": {"condition_id": "a"},
                 "candidate": {"condition_id": "b"}, "verdict": "unchanged", "cases": rows},
                {"kind": "reference", "reference": {"condition_id": "a"},
                 "candidate": {"condition_id": "c"}, "verdict": "mixed", "cases": rows[:1]}]}


def test_summary_holds_no_rows_and_rows_are_one_line_each(tmp_path: Path) -> None:
    write_comparisons(tmp_path, _doc())
    summary = json.loads((tmp_path / "comparisons.json").read_text())
    assert summary["schema_version"] == 2 and summary["cases_file"] == CASES_FILE
    assert all("cases" not in c for c in summary["comparisons"])
    assert [c["n_case_rows"] for c in summary["comparisons"]] == [3, 1]
    lines = (tmp_path / CASES_FILE).read_text().splitlines()
    assert len(lines) == 4
    first = json.loads(lines[0])
    assert first["comparison"] == 0 and first["candidate_id"] == "b" and first["case_id"] == "c0"
    assert json.loads(lines[3])["comparison"] == 1


def test_read_comparisons_round_trips_and_reads_version_1(tmp_path: Path) -> None:
    doc = _doc()
    write_comparisons(tmp_path / "v2", doc)
    assert read_comparisons(tmp_path / "v2") == doc
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "comparisons.json").write_text(json.dumps(doc))
    assert read_comparisons(tmp_path / "v1") == doc
    summary, rows = split_comparisons(doc)
    assert len(rows) == 4 and summary["comparisons"][1]["verdict"] == "mixed"


def test_analyze_only_writes_the_compact_pair(tmp_path: Path) -> None:
    code, _, err = run_cli("--analyze-only", str(FIXTURES / "aeh_runs"), "--output",
                           str(tmp_path), "--json")
    assert code == 0, err
    summary = json.loads((tmp_path / "comparisons.json").read_text())
    rows = (tmp_path / CASES_FILE).read_text().splitlines()
    assert sum(c["n_case_rows"] for c in summary["comparisons"]) == len(rows) > 0
    assert "\n  " not in (tmp_path / CASES_FILE).read_text()  # compact, one object per line


def test_rows_file_is_the_merged_rows_encoded_one_per_line(tmp_path: Path) -> None:
    # The writer puts each comparison's head fields in front of the row's own text instead
    # of merging dicts; the bytes must equal encoding the merged rows (split_comparisons),
    # also for an empty row and a row that carries a head key itself (the row wins).
    doc = _doc()
    doc["comparisons"][1]["cases"] = [{}, {"case_id": "z", "kind": "own", "v": [1.5, None]},
                                      {"case_id": "é\n\"x\"", "p": 1e-300}]
    write_comparisons(tmp_path, doc)
    _, rows = split_comparisons(doc)
    expected = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    assert (tmp_path / CASES_FILE).read_text(encoding="utf-8") == expected
    assert json.loads(expected.splitlines()[4])["kind"] == "own"
