"""Issue 22: `--rescore` with `--analyze-only` was silently ignored. It rescores the runs
under DIR with the config's judges, then analyses them; without a config it is a usage
error naming the working form."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import example_cli_config, run_cli


def _config(tmp: Path, name: str, check: str) -> Path:
    return example_cli_config(tmp / name, name="rs", models=["example-small", "example-large"],
                              seed=3, judge=f"check: '{check}'")


def test_analyze_only_rescore_rescores_then_analyses(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    old = _config(tmp_path, "old.yaml", 'return False, "never"')
    code, _, err = run_cli("--config", str(old), "--limit", "3", "--runs-dir", str(runs),
                           "--no-analysis")
    assert code == 0, err
    new = _config(tmp_path, "new.yaml", 'return True, "always"')
    code, out, err = run_cli("--analyze-only", str(runs / "rs"), "--config", str(new),
                             "--rescore", "--output", str(tmp_path / "a"), "--no-judge-check")
    assert code == 0, err
    assert "rescored 6 case(s)" in out
    records = list((runs / "rs").glob("*/cases/*/record.json"))
    assert len(records) == 6
    assert all(json.loads(p.read_text())["scores"]["ok"]["value"] is True for p in records)
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert all(c["pass_rate"] == 1.0 for c in report["conditions"])  # main: 0.0 (old scores)


def test_rescore_without_a_config_names_the_working_form(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--rescore")
    assert code == 2
    assert "orchestrate --analyze-only DIR --config eval.yaml --rescore" in err
