"""Snapshot tests of report.md and report.json for the fixed fixture run set.

Regenerate after an intended change with ``UPDATE_SNAPSHOTS=1 pytest tests/reports`` and
review the diff. ``generated_at`` is frozen so the files are byte-for-byte reproducible.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "snapshots"


def _check(name: str, actual: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(actual, encoding="utf-8")
    if not path.is_file():
        pytest.fail(f"snapshot {path} missing: run UPDATE_SNAPSHOTS=1 pytest tests/reports")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from its snapshot (UPDATE_SNAPSHOTS=1 to accept)"


def test_markdown_matches_snapshot(written: dict[str, Path]) -> None:
    _check("report.md", written["md"].read_text(encoding="utf-8"))


def test_json_matches_snapshot(written: dict[str, Path]) -> None:
    _check("report.json", written["json"].read_text(encoding="utf-8"))


def test_json_report_fields(written: dict[str, Path], inputs: dict) -> None:
    doc = json.loads(written["json"].read_text(encoding="utf-8"))
    assert doc["schema_version"] == 1 and doc["kind"] == "eval_harness.report"
    assert doc["generated_at"] == "2026-01-01T00:00:00Z"
    conds = {c["condition_id"]: c for c in doc["conditions"]}
    summaries = {s["condition_id"]: s for s in inputs["anova"]["condition_summaries"]}
    assert conds.keys() == summaries.keys()
    for cid, c in conds.items():
        # The report agrees with anova.json on the analysed means.
        assert c["mean"] == pytest.approx(summaries[cid]["mean"], abs=1e-9)
        assert 0.0 <= c["pass_ci"][0] <= c["pass_rate"] <= c["pass_ci"][1] <= 1.0
        assert c["cases_passed"] + c["cases_flaky"] + c["cases_failed"] + c["cases_errored"] == 8
    ref = inputs["comparisons"]["reference"]["condition_id"]
    assert conds[ref]["is_reference"] and conds[ref]["vs_reference"] is None
    for rec in inputs["comparisons"]["comparisons"]:
        vs = conds[rec["candidate"]["condition_id"]]["vs_reference"]
        assert vs["diff"] == pytest.approx(rec["composite"]["estimate"])
        assert vs["verdict"] == rec["verdict"]
    assert [t["term"] for t in doc["anova"]["terms"]] == list(inputs["anova"]["terms"])
    assert set(doc["main_effects"]) == {"model", "prompt"}
    assert list(doc["interactions"]) == ["model:prompt"]
    # One errored attempt (small/plain, c03, r2): listed, never counted as a failure.
    small_plain = next(c for c in doc["conditions"] if c["levels"] == {"model": "small", "prompt": "plain"})
    assert small_plain["n_errored_attempts"] == 1 and small_plain["n_attempts"] == 24


def test_markdown_escapes_user_text(written: dict[str, Path]) -> None:
    md = written["md"].read_text(encoding="utf-8")
    assert "<i>" not in md and "&lt;i&gt;cot&lt;/i&gt;" in md
    for line in md.splitlines():
        if line.startswith("|"):
            # every row of a table has the header's number of cells (no stray pipes)
            cells = line.replace("\\|", "").count("|")
            assert cells >= 3
    assert len(md) < 65_536  # fits a GitHub pull-request comment
