"""Issue 6 end to end: export a compact baseline from a run of the example, then an
unchanged rerun passes the gate (exit 0) and a degraded agent fails it (exit 1), naming
the regressed cases."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT, run_cli

CONDITION = "model=example-large,effort=high,context=docs"


def _config(tmp: Path, name: str, degrade: float) -> Path:
    agent = ROOT / "configs" / "example" / "agent.py"
    text = f"""\
extends: {ROOT / "configs" / "example.yaml"}
runner:
  command: python3 -S {agent} --model {{model}} --effort {{effort}} --context {{context}} --case-id {{case_id}} --question {{question}}
dataset:
  path: {ROOT / "configs" / "example" / "cases.jsonl"}
execution:
  env: {{EXAMPLE_AGENT_SEED: "11", EXAMPLE_AGENT_DEGRADE: "{degrade}"}}
"""
    path = tmp / name
    path.write_text(text)
    return path


def _run(config: Path, runs: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("--config", str(config), "--condition", CONDITION, "--limit", "12",
                   "--runs-dir", str(runs), "--output", str(out), "--no-judge-check",
                   "--concurrency", "4", *extra)


def test_baseline_export_then_gate(tmp_path: Path) -> None:
    good = _config(tmp_path, "good.yaml", 0.0)
    base = tmp_path / "baseline.json"
    code, _, err = _run(good, tmp_path / "r1", tmp_path / "a1", "--export", str(base), "--compact")
    assert code == 0, err
    data = json.loads(base.read_text())
    text = base.read_text()
    assert "Answer:" not in text  # compact: no outputs
    assert data["schema_version"] == 1

    # unchanged rerun, executed again from scratch (seeded agent): passes the gate
    code, _, err = _run(good, tmp_path / "r2", tmp_path / "a2", "--baseline", str(base),
                        "--fail-on-regression")
    assert code == 0, err

    # the same agent made worse: fails, naming the regressed cases
    bad = _config(tmp_path, "bad.yaml", 4.0)
    code, _, err = _run(bad, tmp_path / "r3", tmp_path / "a3", "--baseline", str(base),
                        "--fail-on-regression")
    assert code == 1, err
    assert "significant overall drop" in err
    # --gate strict (deterministic apps) names every case whose verdict got worse
    code, _, err = _run(bad, tmp_path / "r3", tmp_path / "a4", "--analyze-only",
                        str(tmp_path / "r3"), "--baseline", str(base), "--fail-on-regression",
                        "--gate", "strict")
    assert code == 1, err
    comps = json.loads((tmp_path / "a4" / "comparisons.json").read_text())
    regressed = {c for comp in comps["comparisons"] for c in comp["regressed"]}
    assert regressed
    assert any(case in err for case in regressed)
