"""Shared helpers for runner / store tests: write a tiny eval, a fake scorer, read records."""
from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import yaml

from eval_harness.judges.interface import Sample, ScoreResult
from eval_harness.matrix.experiment import Experiment, prepare
from eval_harness.runner.cell import Backoff
from eval_harness.runner.engine import EngineOptions
from eval_harness.store.records import JudgeScore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AGENT = FIXTURES / "agents" / "fake_agent.py"
REPO = Path(__file__).resolve().parents[2]


def write_eval(tmp: Path, *, factors: dict[str, list[Any]], runner: dict[str, Any],
               n_cases: int = 3, replications: int = 1, execution: dict[str, Any] | None = None,
               name: str = "t") -> Path:
    """An eval.yaml with ``n_cases`` cases c00.. (expected ``answer-<id>``); returns its path."""
    cases = [{"id": f"c{i:02d}", "input": {"question": f"q{i}"},
              "expected": {"answer": f"answer-c{i:02d}"}} for i in range(n_cases)]
    (tmp / "cases.yaml").write_text(yaml.safe_dump(cases))
    cfg = {"name": name, "matrix": {"factors": factors, "replications": replications},
           "runner": runner, "dataset": {"path": "cases.yaml"},
           "execution": {"timeout": 20, "kill_grace": 0.5, "retries": 0, **(execution or {})}}
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def agent_command(mode_placeholder: str = "{mode}") -> str:
    """cli command running the fixture agent with the given mode placeholder."""
    return f"{sys.executable} -S {AGENT} {mode_placeholder} {{case_id}}"


class FakeScorer:
    """1.0 when the answer equals ``expected.answer``; counts calls; can be made to raise."""

    def __init__(self, raise_for: set[str] | None = None) -> None:
        self.calls: list[Sample] = []
        self.lock = threading.Lock()
        self.raise_for = raise_for or set()

    def score(self, sample: Sample) -> ScoreResult:
        with self.lock:
            self.calls.append(sample)
        if sample.case_id in self.raise_for:
            raise RuntimeError("judge exploded")
        ok = sample.outputs["output"] == sample.expected["answer"]
        return ScoreResult({"match": JudgeScore(value=ok, kind="boolean", normalized=float(ok))},
                           composite=float(ok))


def options(runs: Path, **kw: Any) -> EngineOptions:
    """Fast test options: quiet progress, short backoff."""
    kw.setdefault("concurrency", 4)
    return EngineOptions(runs_dir=runs, progress="off", backoff=Backoff(0.01, 0.05), **kw)


def experiment(path: Path, **kw: Any) -> Experiment:
    return prepare(path, **kw)


def records(eval_dir: Path) -> list[dict[str, Any]]:
    """Every record.json under an eval dir (parsed)."""
    return [json.loads(p.read_text()) for p in sorted(eval_dir.glob("*/cases/*/record.json"))]


def by_mode(recs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        out.setdefault(str(r["levels"].get("mode")), []).append(r)
    return out
