"""Reports at scale (issue 14): report.json stays small and readable by splitting a large
case grid into report.cases.jsonl, the HTML page stays bounded, the writers are exact."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from eval_harness.jsonfile import json_text
from eval_harness.reports import build_report, write_reports, writer
from eval_harness.reports import summaries as sm
from eval_harness.reports.html import grid_rows, render_html
from eval_harness.reports.html.drilldown import drilldown_html
from eval_harness.reports.writer import CASES_FILE, read_report, report_json


def _big_frame(n_levels: tuple[int, ...], n_cases: int, seed: int = 5) -> pd.DataFrame:
    """A tidy frame (one replication, judges ``ok`` and ``composite``) built column-wise."""
    rng = np.random.default_rng(seed)
    factors = [f"f{i}" for i in range(len(n_levels))]
    levels = {f: [f"{f}-l{j}" for j in range(n)] for f, n in zip(factors, n_levels, strict=True)}
    combos = list(itertools.product(*levels.values()))
    n_cond = len(combos)
    cond = np.repeat(np.arange(n_cond), n_cases)
    case = np.tile(np.arange(n_cases), n_cond)
    value = (rng.random(n_cond * n_cases) < 0.2 + 0.6 * rng.random(n_cases)[case]).astype(float)
    value[rng.random(len(value)) < 0.01] = np.nan  # some errored samples
    base = {"eval": "big", "run_id": np.array([f"r{i}" for i in range(n_cond)])[cond],
            "condition_id": np.array([f"cond{i:03d}" for i in range(n_cond)])[cond],
            **{f: np.array([c[k] for c in combos])[cond] for k, f in enumerate(factors)},
            "replication": 1, "case_id": np.array([f"case{c:05d}" for c in range(n_cases)])[case],
            "errored": np.isnan(value), "case_status": np.where(np.isnan(value), "errored", "ok"),
            "latency_s": 1.0 + cond, "cost_usd": 0.001 * (1 + cond), "tokens": np.nan,
            "tool_calls": np.nan, "case_hash": "", "value": value, "normalized": value}
    parts = [pd.DataFrame({**base, "judge": judge, "kind": kind})
             for judge, kind in (("ok", "boolean"), ("composite", "composite"))]
    frame = pd.concat(parts, ignore_index=True)
    frame.attrs.update(factors=factors, levels=levels, issues=[], case_tags={})
    return frame


@pytest.fixture(scope="module")
def big() -> tuple[pd.DataFrame, dict[str, Any]]:
    frame = _big_frame((2, 2, 2, 2), 5_000)  # 16 conditions x 5,000 cases
    return frame, build_report(anova={}, frame=frame, generated_at="2026-01-01T00:00:00Z")


def test_large_report_json_keeps_the_first_cases_and_every_case_in_json_lines(
        big: tuple[pd.DataFrame, dict[str, Any]], tmp_path: Path) -> None:
    frame, report = big
    write_reports(tmp_path, anova={}, frame=frame, report=report, formats=["json"])
    text = (tmp_path / "report.json").read_text(encoding="utf-8")
    assert len(text.encode()) < 2_500_000  # 625 cases inline; all 5,000 made 15.5 MB
    doc = json.loads(text)
    grid = doc["case_grid"]
    keep = writer.GRID_INLINE_CELLS // 16
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
    write_reports(tmp_path, anova={}, frame=frame, report=report, formats=["json"])
    assert (tmp_path / CASES_FILE).is_file()
    small = _big_frame((2,), 40)
    write_reports(tmp_path, anova={}, frame=small, formats=["json"])
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
    frame = _big_frame((2,), 3)
    for rid in frame["run_id"].unique():
        (tmp_path / rid).mkdir()  # agent-eval-harness layout: no cases/ folder
    report = build_report(anova={}, frame=frame)
    html = drilldown_html(report, frame, tmp_path)
    assert "no per-case folders" in html and "<details>" not in html


def _case_grid_reference(cases: pd.DataFrame, condition_ids: list[str]) -> dict[str, Any]:
    """The row-by-row case grid the vectorised one replaced (same output expected)."""
    by_case: dict[Any, dict[str, Any]] = {}
    for r in cases.itertuples(index=False):
        comp = float(r.composite_mean)
        by_case.setdefault(r.case_id, {})[str(r.condition_id)] = {
            "passes": int(r.n_pass), "attempts": int(r.n_usable),
            "errored_attempts": int(r.n_errored), "verdict": str(r.verdict),
            "composite": comp if math.isfinite(comp) else None}
    rows = []
    for case_id in sorted(by_case):
        cells = by_case[case_id]
        verdicts = {cells[c]["verdict"] if c in cells else "missing" for c in condition_ids}
        comps = [v["composite"] for v in cells.values() if v["composite"] is not None]
        rows.append({"case_id": str(case_id), "differs": len(verdicts) > 1,
                     "mean_composite": float(np.mean(comps)) if comps else None, "cells": cells})
    rows.sort(key=lambda r: (not r["differs"], r["mean_composite"]
                             if r["mean_composite"] is not None else math.inf, r["case_id"]))
    return {"condition_ids": condition_ids, "n_cases": len(rows),
            "n_differing": sum(r["differs"] for r in rows), "cases": rows}


def test_case_grid_equals_the_row_by_row_grid() -> None:
    frame = _big_frame((3, 2), 300, seed=11)
    # a missing cell and a case errored everywhere in one condition
    frame = frame[~((frame["case_id"] == "case00007") & (frame["condition_id"] == "cond002"))]
    _, cases = sm.verdict_tables(frame)
    cids = sorted(frame["condition_id"].unique())
    assert sm.case_grid(cases, cids) == _case_grid_reference(cases, cids)


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

    monkeypatch.setattr(writer, "GRID_INLINE_CELLS", 2)  # the fixture's grid counts as large
    code, out, err = run_cli("--analyze-only", str(FIXTURES / "aeh_runs"), "--output",
                             str(tmp_path))
    assert code == 0, err
    assert str(tmp_path / CASES_FILE) in out  # "wrote ..." names it
    doc = read_report(tmp_path)
    assert len(doc["case_grid"]["cases"]) == doc["case_grid"]["n_cases"] > 1


def _marginal_reference(cases: pd.DataFrame, frame: pd.DataFrame,
                        by: list[str]) -> list[dict[str, Any]]:
    """Marginal means grouped on the level strings (what the coded grouping replaced)."""
    from eval_harness.analysis.compare.build import condition_table

    conds = condition_table(frame)[["condition_id", *sm.factors_of(frame)]]
    merged = cases.merge(conds, on="condition_id", how="left")
    merged = merged[merged["verdict"] != "errored"]
    per_case = merged.groupby([*by, "case_id"], sort=False, observed=True)["composite_mean"].mean()
    out = []
    level: int | list[int] = 0 if len(by) == 1 else list(range(len(by)))
    for key, sub in per_case.groupby(level=level, sort=False, observed=True):
        key_t = key if isinstance(key, tuple) else (key,)
        mean, ci = sm.mean_ci(sub.to_numpy(dtype=float))
        out.append({"levels": dict(zip(by, key_t, strict=True)), "mean": mean, "ci": ci})
    order = frame.attrs["levels"]
    out.sort(key=lambda r: tuple(order[f].index(r["levels"][f]) for f in by))
    return out


def test_marginal_means_equal_the_grouping_on_level_strings() -> None:
    frame = _big_frame((3, 2, 2), 400, seed=13)
    _, cases = sm.verdict_tables(frame)
    assert (cases["verdict"] == "errored").any()  # errored cells are left out
    cells = sm.usable_cells(cases, frame)
    for by in (["f0"], ["f2"], ["f0", "f1"], ["f1", "f2"]):
        got = sm.marginal_means(cases, frame, by, merged=cells)
        assert got == _marginal_reference(cases, frame, by)  # exactly, floats included
        assert got == sm.marginal_means(cases, frame, by)


def test_case_grid_shares_equal_cells_but_keeps_negative_zero_apart() -> None:
    cases = pd.DataFrame({
        "case_id": ["a", "a", "b", "b"], "condition_id": ["x", "y", "x", "y"],
        "n_pass": [1, 1, 0, 0], "n_usable": [1, 1, 1, 1], "n_errored": [0, 0, 0, 0],
        "verdict": ["passed", "passed", "failed", "failed"],
        "composite_mean": [1.0, 1.0, 0.0, -0.0]})
    grid = sm.case_grid(cases, ["x", "y"])
    cells = {r["case_id"]: r["cells"] for r in grid["cases"]}
    assert cells["a"]["x"] is cells["a"]["y"]  # equal content: one object
    assert cells["b"]["x"] is not cells["b"]["y"]  # 0.0 and -0.0: equal, written apart
    assert json.dumps([cells["b"]["x"]["composite"], cells["b"]["y"]["composite"]]) == \
        "[0.0, -0.0]"
    assert grid == _case_grid_reference(cases, ["x", "y"])


def test_pareto_front_equals_the_pairwise_definition() -> None:
    def brute(points: list[tuple[str, float, float]]) -> list[str]:
        return [pid for pid, c, q in points
                if not any(c2 <= c and q2 >= q and (c2 < c or q2 > q) for _, c2, q2 in points)]

    rng = np.random.default_rng(2)
    for n in (0, 1, 2, 5, 40, 300):
        # few distinct values, so equal costs and equal qualities (ties) are common
        pts = [(f"c{i}", float(rng.integers(0, 6)), float(rng.integers(0, 6))) for i in range(n)]
        assert sm.pareto_front(pts) == brute(pts)
    pts = [(f"c{i}", float(c), float(q)) for i, (c, q) in enumerate(rng.random((300, 2)))]
    assert sm.pareto_front(pts) == brute(pts)
