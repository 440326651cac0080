"""Write minimal run directories (store layout) for rescore / pairwise tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval_harness.matrix.experiment import Experiment


def write_runs(root: Path, exp: Experiment, answers: dict[str, dict[str, str]],
               status: str = "ok") -> Path:
    """answers: condition model level -> {case_id: answer}. Returns the eval dir."""
    eval_dir = root / exp.name
    for cond in exp.conditions:
        run_dir = eval_dir / f"run-{cond.label}"
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "run.json").write_text(json.dumps({
            "schema_version": 1, "eval": exp.name, "run_id": run_dir.name,
            "condition_id": cond.condition_id, "levels": cond.levels, "replication": 1}))
        for case in exp.cases:
            answer = answers[str(cond.levels["model"])][case.case_id]
            case_dir = run_dir / "cases" / case.case_id
            case_dir.mkdir(parents=True, exist_ok=True)
            (case_dir / "input.json").write_text(json.dumps(case.input))
            (case_dir / "outputs.json").write_text(json.dumps({
                "exit_code": 0, "stdout": answer, "stderr": "", "output": answer, "files": {},
                "latency_s": 2.0, "cost_usd": 0.01, "tokens": 30, "tool_calls": None, "trace": []}))
            record: dict[str, Any] = {
                "schema_version": 1, "case_id": case.case_id, "condition_id": cond.condition_id,
                "replication": 1, "status": status, "latency_s": 2.0, "cost_usd": 0.01,
                "scores": {}, "composite": None, "runner_note": "kept"}
            (case_dir / "record.json").write_text(json.dumps(record))
    return eval_dir
