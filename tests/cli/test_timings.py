"""``--timings``: every analysis phase on stderr and in timings.json; off by default."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES, run_cli

AEH = FIXTURES / "aeh_runs"
PHASES = ["imports", "load", "anova", "anova/contrasts", "anova/per-judge", "verdicts",
          "comparisons", "leaderboard", "anova.json", "comparisons.json", "leaderboard.json",
          "report model", "report.md", "report.json", "report.html", "console"]


def test_timings_cover_every_phase_with_non_negative_numbers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli("--analyze-only", str(AEH), "--output", str(out), "--per-judge",
                           "--timings")
    assert code == 0, err
    doc = json.loads((out / "timings.json").read_text())
    assert doc["schema_version"] == 1
    paths = [p["path"] for p in doc["phases"]]
    assert paths == PHASES  # each once, in pipeline order, nested ones under their parent
    for p in doc["phases"]:
        assert p["calls"] == 1
        assert p["wall_s"] >= 0 and p["cpu_s"] >= 0 and p["peak_rss_delta_mib"] >= 0, p
    total = doc["total"]
    assert total["wall_s"] >= sum(p["wall_s"] for p in doc["phases"] if p["depth"] == 0)
    assert total["cpu_s"] > 0 and total["peak_rss_mib"] > 0 and total["unphased_wall_s"] >= 0
    table = err[err.index("phase "):]
    for p in doc["phases"]:
        assert f"\n{'  ' * p['depth']}{p['name']} " in table, p["name"]
    assert "\ntotal " in table and f"wrote {out / 'timings.json'}" in err


def test_timings_are_off_by_default(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli("--analyze-only", str(AEH), "--output", str(out), "--no-report",
                           "--json")
    assert code == 0, err
    assert (out / "anova.json").is_file()
    assert not (out / "timings.json").exists()
    assert "wall s" not in err and "timings" not in err
