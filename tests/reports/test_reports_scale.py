"""Reports at scale (issue 14): report.json stays small and readable by splitting a large
case grid into report.cases.jsonl, the HTML page stays bounded, the writers are exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tidy_frames import big_frame

from eval_harness._util.json_text import json_text
from eval_harness.reports import AnalysisDocuments, build_report, report_files, write_reports
from eval_harness.reports.html import grid_rows, render_html
from eval_harness.reports.html.drilldown import drilldown_html
from eval_harness.reports.report_files import CASES_FILE, read_report, report_json


@pytest.fixture(scope="module")
def big() -> tuple[pd.DataFrame, dict[str, Any]]:
    frame = big_frame((2, 2, 2, 2), 5_000)  # 16 conditions x 5,000 cases
    return frame, build_report(AnalysisDocuments(anova={}), frame, generated_at="2026-01-01T00:00:00Z")


def test_large_report_json_keeps_the_first_cases_and_every_case_in_json_lines(
        big: tuple[pd.DataFrame, dict[str, Any]], tmp_path: Path) -> None:
    frame, report = big
    write_reports(tmp_path, AnalysisDocuments(anova={}, report=report), frame, formats=["json"])
    text = (tmp_path / "report.json").read_text(encoding="utf-8")
    assert len(text.encode()) < 2_500_000  # 625 cases inline; all 5,000 made 15.5 MB
    doc = json.loads(text)
    grid = doc["case_grid"]
    keep = report_files.GRID_INLINE_CELLS // 16
    assert grid["n_cases"] == 5_000 and grid["n_cases_inline"] == keep == len(grid["cases"])
    assert grid["cases_file"] == CASES_FILE
    lines = (tmp_path / CASES_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5_000
    full = json.loads(report_json(report))  # the whole model, cleaned as report.json is
    assert grid["cases"] == full["case_grid"]["cases"][:keep]  # the grid's first cases
    back = read_report(tmp_path)
    assert back["case_grid"] == full["case_grid"]
    assert {k: v for k, v in back.items() if k != "case_grid"} == \
        {k: v for k, v in full.items() if k != "case_grid"}


def test_small_grid_stays_inline_and_a_stale_rows_file_is_removed(
        big: tuple[pd.DataFrame, dict[str, Any]], tmp_path: Path) -> None:
    frame, report = big
    write_reports(tmp_path, AnalysisDocuments(anova={}, report=report), frame, formats=["json"])
    assert (tmp_path / CASES_FILE).is_file()
    small = big_frame((2,), 40)
    write_reports(tmp_path, AnalysisDocuments(anova={}), small, formats=["json"])
    assert not (tmp_path / CASES_FILE).exists()
    text = (tmp_path / "report.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "schema_version": 1,')  # small: indented as before
    doc = json.loads(text)
    assert "cases_file" not in doc["case_grid"] and len(doc["case_grid"]["cases"]) == 40
    assert read_report(tmp_path) == doc


def test_large_html_page_is_bounded_and_says_what_it_omits(
        big: tuple[pd.DataFrame, dict[str, Any]]) -> None:
    frame, report = big
    page = render_html(report, frame=frame, runs_root=None)
    assert len(page.encode()) < 1_000_000
    assert "4000 more case(s) not shown" in page
    assert "report.cases.jsonl" in page


def test_all_cases_table_rows_shrink_with_more_conditions() -> None:
    def rows(n_cond: int) -> int:
        return grid_rows({"case_grid": {"condition_ids": [str(i) for i in range(n_cond)]}})

    assert rows(4) == rows(16) == 1_000  # small and usual reports: as before
    assert rows(64) == 250 and rows(1_000) == 100


def test_drilldown_says_when_runs_have_no_per_case_folders(tmp_path: Path) -> None:
    frame = big_frame((2,), 3)
    for rid in frame["run_id"].unique():
        (tmp_path / rid).mkdir()  # agent-eval-harness layout: no cases/ folder
    report = build_report(AnalysisDocuments(anova={}), frame)
    html = drilldown_html(report, frame, tmp_path)
    assert "no per-case folders" in html and "<details>" not in html


def test_json_text_indents_small_documents_only() -> None:
    doc = {"a": [1, 2.5, None], "b": {"c": "é"}}
    assert json_text(doc, ensure_ascii=False) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    compact = json_text(doc, ensure_ascii=False, indent_max=10)
    assert compact == '{"a":[1,2.5,null],"b":{"c":"é"}}\n'
    assert json.loads(compact) == doc
    with pytest.raises(ValueError):
        json_text({"x": float("nan")})


def test_analyze_only_names_the_rows_file_when_the_grid_is_split(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import FIXTURES, run_cli

    monkeypatch.setattr(report_files, "GRID_INLINE_CELLS", 2)  # the fixture's grid counts as large
    code, out, err = run_cli("--analyze-only", str(FIXTURES / "aeh_runs"), "--output",
                             str(tmp_path))
    assert code == 0, err
    assert str(tmp_path / CASES_FILE) in out  # "wrote ..." names it
    doc = read_report(tmp_path)
    assert len(doc["case_grid"]["cases"]) == doc["case_grid"]["n_cases"] > 1
