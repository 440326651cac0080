"""Simple effects appear in every report (console, Markdown, HTML), and comparisons with a
baseline are labelled ``baseline`` on the console (not the condition's own label)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_simple_effects_in_every_report(starter_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_cli("--analyze-only", str(starter_runs), "--output", str(out),
                                "--simple-effects", "model", "--simple-effects", "auto")
    assert code == 0, err
    anova = json.loads((out / "anova.json").read_text())
    blocks = anova["simple_effects"]
    assert [(b["factor"], b["by"]) for b in blocks] == [("style", "model")] * 2
    assert {b["at"] for b in blocks} == {"starter-small", "starter-large"}
    title = "Simple effects (a − b within each level of another factor)"
    console = stdout.splitlines()
    start = next(i for i, line in enumerate(console) if line.startswith(title))
    rows = console[start + 3:start + 5]
    assert "corrected within each (factor, within-level) family" in console[start + 5]
    assert all(r.split()[0] == "style" and r.split()[1].startswith("model=") for r in rows)
    md = (out / "report.md").read_text()
    assert f"### {title}" in md and md.count("| style | model=") == 2
    assert title in (out / "report.html").read_text()


def test_no_simple_effects_table_unless_asked(starter_runs: Path, tmp_path: Path) -> None:
    code, stdout, _ = run_cli("--analyze-only", str(starter_runs), "--output", str(tmp_path))
    assert code == 0 and "Simple effects" not in stdout


def test_baseline_rows_say_baseline(starter_runs: Path, tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    code, _, err = run_cli("--analyze-only", str(starter_runs), "--output", str(tmp_path / "a"),
                           "--export", str(base), "--compact")
    assert code == 0, err
    assert f"exported baseline {base}: compact" in err and "4 condition(s), 40 sample(s)" in err
    code, stdout, err = run_cli("--analyze-only", str(starter_runs), "--output",
                                str(tmp_path / "b"), "--baseline", str(base))
    assert code == 0, err
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Regression comparisons"))
    table = lines[start + 3:start + 10]
    baseline_rows = [r for r in table if " baseline " in r]
    assert len(baseline_rows) == 4  # each condition against itself in the baseline
    assert all("unchanged" in r for r in baseline_rows)
    for row in table:  # no row reads like a condition compared with itself
        cells = [c for c in row.split("  ") if c.strip()]
        assert cells[0].strip() != cells[1].strip(), row
