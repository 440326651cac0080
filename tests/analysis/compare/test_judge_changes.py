"""Issue 22: a changed judge is a changed case. Swapping a case's judge from exact_match to
contains (same name) and comparing with the baseline reported "cases improved" on main;
the case is ``modified`` (judge specs changed), never improved or regressed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import example_cli_config, run_cli


def _config(tmp: Path, name: str, judge: str) -> Path:
    return example_cli_config(tmp / name, name="judged", models=["example-large"], seed=5,
                              judge=judge)


def test_a_swapped_judge_makes_cases_modified(tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    old = _config(tmp_path, "old.yaml", "exact_match: true")
    code, _, err = run_cli("--config", str(old), "--limit", "4", "--runs-dir",
                           str(tmp_path / "r1"), "--output", str(tmp_path / "a1"),
                           "--export", str(base), "--compact")
    assert code == 0, err
    new = _config(tmp_path, "new.yaml", 'contains: "Answer:"')
    code, _, err = run_cli("--config", str(new), "--limit", "4", "--runs-dir",
                           str(tmp_path / "r2"), "--output", str(tmp_path / "a2"),
                           "--baseline", str(base), "--fail-on-regression", "--gate", "strict")
    assert code == 0, err
    doc = json.loads((tmp_path / "a2" / "comparisons.json").read_text())
    (comp,) = [c for c in doc["comparisons"] if c["kind"] == "baseline"]
    assert len(comp["modified"]) == 4
    assert comp["improved"] == [] and comp["regressed"] == []
    assert comp["verdict"] == "no-comparable-cases"
    rows = [json.loads(line) for line in
            (tmp_path / "a2" / "comparisons.cases.jsonl").read_text().splitlines()]
    assert {r["reason"] for r in rows if r.get("status") == "modified"} == {
        "judge specs changed (type, options, range, weight or gate)"}
