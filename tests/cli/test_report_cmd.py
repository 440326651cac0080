"""``orchestrate.py report``: regenerate reports from anova.json + run directories."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
sys.path.insert(0, str(FIXTURES))

import report_fixture  # noqa: E402


def test_report_regenerates_from_analysis_output(cli, tmp_path: Path) -> None:
    runs = report_fixture.write_runs(tmp_path / "runs")
    out = tmp_path / "analysis"
    out.mkdir()
    shutil.copy(FIXTURES / "anova.json", out / "anova.json")
    shutil.copy(FIXTURES / "comparisons.json", out / "comparisons.json")
    code, stdout, stderr = cli("report", "--output", str(out), "--runs", str(runs),
                               "--format", "md,json")
    assert code == 0, stderr
    assert "Conditions" in stdout and "wrote md" in stdout
    assert (out / "report.md").is_file() and not (out / "report.html").exists()
    doc = json.loads((out / "report.json").read_text())
    assert len(doc["conditions"]) == 4 and doc["leaderboard"]["rows"][0]["rank"] == 1
    assert doc["reference"]["condition_id"] == "98f243094500"


def test_report_without_anova_is_a_usage_error(cli, tmp_path: Path) -> None:
    code, _, stderr = cli("report", "--output", str(tmp_path), "--runs", str(tmp_path))
    assert code == 2 and "anova.json not found" in stderr


def test_report_rejects_unknown_format(cli, tmp_path: Path) -> None:
    code, _, stderr = cli("report", "--output", str(tmp_path), "--format", "pdf")
    assert code == 2 and "unknown report format" in stderr
