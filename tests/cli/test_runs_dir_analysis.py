"""Issue 37 friction: ``--runs-dir elsewhere`` wrote its analysis to ``./analysis/<eval>/``,
overwriting the report of another runs directory. Now the default runs directory keeps
``analysis/<eval>/`` and any other one writes ``<runs-dir>-analysis/<eval>/`` beside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli


def _config(tmp: Path, answer: str) -> Path:
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": f"c{i}", "input": {"q": str(i)}}) + "\n"
                             for i in range(4)))
    path = tmp / f"eval-{answer}.yaml"
    path.write_text(f"""\
name: same
matrix:
  factors:
    model: [a, b]
runner:
  type: cli
  command: echo {answer}
dataset:
  path: {cases}
judges:
  - name: right
    check: 'return "yes" in str(outputs.get("output")), ""'
""")
    return path


def test_two_runs_dirs_never_share_a_report(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for runs, answer in (("runs", "yes"), ("elsewhere", "no"), ("third", "yes")):
        code, _, err = run_cli("--config", str(_config(tmp_path, answer)), "--runs-dir", runs,
                               "--no-judge-check")
        assert code == 0, err
    rates = {}
    for folder in ("analysis", "elsewhere-analysis", "third-analysis"):
        report = json.loads((tmp_path / folder / "same" / "report.json").read_text())
        rates[folder] = {c["pass_rate"] for c in report["conditions"]}
    assert rates == {"analysis": {1.0}, "elsewhere-analysis": {0.0}, "third-analysis": {1.0}}
    assert [n for n in os.listdir(tmp_path / "analysis") if not n.startswith(".")] == ["same"]
