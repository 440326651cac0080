"""Fixtures of the report tests: the deterministic run set of tests/fixtures/reports/."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
sys.path.insert(0, str(FIXTURE_DIR))

import report_fixture  # noqa: E402

GENERATED_AT = "2026-01-01T00:00:00Z"


def _json(name: str) -> Any:
    return json.loads((FIXTURE_DIR / name).read_text(encoding="utf-8"))


def thresholds() -> list[dict[str, Any]]:
    """Threshold results in the shape of judges.thresholds.evaluate_thresholds."""
    out = []
    frame = report_fixture.build_frame()
    comp = frame[(frame["judge"] == "composite") & ~frame["errored"]]
    for cid, g in comp.groupby("condition_id", sort=True):
        levels = {f: g.iloc[0][f] for f in report_fixture.FACTORS}
        value = float((g["value"] >= 0.5).mean())
        out.append({"condition_id": cid, "levels": levels, "target": "composite",
                    "metric": "min_pass_rate", "value": value, "threshold": 0.6,
                    "passed": value >= 0.6, "n": len(g), "n_errored": 0})
    return out


def pairwise() -> dict[str, Any]:
    """A pairwise.json document (judges.pairwise format) with one pair."""
    ids = sorted(report_fixture.build_frame()["condition_id"].unique())
    return {"schema_version": 1, "judges": {"preference": {"model": "openai:stub", "pairs": [
        {"a": ids[0], "b": ids[1], "levels_a": {"model": "large", "prompt": "<i>cot</i>"},
         "levels_b": {"model": "small", "prompt": "plain"},
         "summary": {"n": 8, "wins": 5, "ties": 2, "losses": 1, "errored": 0, "inconsistent": 1,
                     "win_rate": 0.75, "sign_test_p": 0.21875},
         "results": []}]}}}


@pytest.fixture(scope="session")
def inputs() -> dict[str, Any]:
    """The fixture run set's documents (AnalysisDocuments fields) and ``frame``."""
    return {
        "anova": _json("anova.json"),
        "frame": report_fixture.build_frame(),
        "comparisons": _json("comparisons.json"),
        "leaderboard": _json("leaderboard.json"),
        "thresholds": thresholds(),
        "pairwise": pairwise(),
    }


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run directories of the fixture run set (input, outputs, records)."""
    return report_fixture.write_runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="session")
def written(inputs: dict[str, Any], runs_root: Path,
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """All three reports of the fixture run set, written once per session."""
    from eval_harness.reports import AnalysisDocuments, write_reports

    docs = AnalysisDocuments(**{k: v for k, v in inputs.items() if k != "frame"})
    return write_reports(tmp_path_factory.mktemp("out"), docs, inputs["frame"], runs_root=runs_root,
                         generated_at=GENERATED_AT)
