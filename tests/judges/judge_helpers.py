"""Helpers of the judge tests (imported by name; conftest keeps only fixtures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from eval_harness.judges.interface import Sample
from eval_harness.judges.llm.chat_call import RetryPolicy
from eval_harness.matrix.experiment import Experiment, prepare

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, timeout=10.0)


def write_experiment(tmp: Path, judges: list[dict[str, Any]], cases: list[dict[str, Any]],
                     **extra: Any) -> Path:
    """Write eval.yaml + cases.yaml; return the config path."""
    (tmp / "cases.yaml").write_text(yaml.safe_dump(cases), encoding="utf-8")
    config = {"name": "jt", "matrix": {"factors": {"model": ["m1", "m2"]}},
              "runner": {"type": "cli", "command": "echo {model}"},
              "dataset": {"path": "cases.yaml"}, "judges": judges, **extra}
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def make_experiment(tmp: Path, judges: list[dict[str, Any]],
                    cases: list[dict[str, Any]] | None = None, **extra: Any) -> Experiment:
    """A prepared experiment (two conditions: model m1 / m2)."""
    cases = cases or [{"id": "c1", "input": {"q": "capital of France?"},
                       "expected": {"answer": "Paris is the capital.", "entities": ["Paris"]}}]
    return prepare(write_experiment(tmp, judges, cases, **extra))


def sample(exp: Experiment, output: str = "Paris", case: int = 0, **outputs: Any) -> Sample:
    """A sample of the first condition."""
    c = exp.cases[case]
    cond = exp.conditions[0]
    outs = {"exit_code": 0, "stdout": output, "stderr": "", "output": output, "files": {},
            "latency_s": 1.0, "cost_usd": None, "tokens": None, "tool_calls": None, "trace": []}
    outs.update(outputs)
    return Sample(c.case_id, dict(c.input), c.expected, dict(c.annotations), outs,
                  dict(cond.levels), cond.condition_id, 1)
