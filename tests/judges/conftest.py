"""Shared fixtures: the LLM stub over real HTTP on 127.0.0.1, and tiny experiments on disk."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))

from llm_stub import LLMStub

from eval_harness.judges.api import Sample
from eval_harness.judges.llm.http import RetryPolicy, reset_capabilities
from eval_harness.matrix.experiment import Experiment, prepare

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, timeout=10.0)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMStub]:
    """A running stub; both providers' base URLs point at it."""
    reset_capabilities()
    with LLMStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test")
        yield server
    reset_capabilities()


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
