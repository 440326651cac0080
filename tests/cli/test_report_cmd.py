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


def _analysis(tmp_path: Path, comparisons: bytes | None) -> tuple[Path, Path]:
    runs = report_fixture.write_runs(tmp_path / "runs")
    out = tmp_path / "analysis"
    out.mkdir()
    shutil.copy(FIXTURES / "anova.json", out / "anova.json")
    if comparisons is not None:
        (out / "comparisons.json").write_bytes(comparisons)
    return runs, out


def test_report_says_which_pass_rule_it_assumed(cli, tmp_path: Path) -> None:
    # main: without a recorded verdict_rule the 0.5 pass mark was used silently
    doc = json.loads((FIXTURES / "comparisons.json").read_text())
    doc.pop("verdict_rule")
    runs, out = _analysis(tmp_path, json.dumps(doc).encode())
    code, _, stderr = cli("report", "--output", str(out), "--runs", str(runs),
                          "--format", "json", "--quiet")
    assert code == 0, stderr
    warnings = [ln for ln in stderr.splitlines() if "pass rule" in ln]
    assert len(warnings) == 1 and "records no pass rule" in warnings[0]
    assert "composite ≥ 0.5" in warnings[0] and "comparisons.json" in warnings[0]
    shutil.copy(FIXTURES / "comparisons.json", out / "comparisons.json")  # rule recorded
    code, _, stderr = cli("report", "--output", str(out), "--runs", str(runs),
                          "--format", "json", "--quiet")
    assert code == 0 and "pass rule" not in stderr


def test_a_broken_comparisons_json_is_exit_2_naming_it(cli, tmp_path: Path) -> None:
    for raw, says in ((b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
                      (b'{"x": "\xff"}', "not UTF-8")):
        runs, out = _analysis(tmp_path, raw)
        code, _, stderr = cli("report", "--output", str(out), "--runs", str(runs))
        assert code == 2 and says in stderr and str(out / "comparisons.json") in stderr
        shutil.rmtree(tmp_path)
        tmp_path.mkdir()
