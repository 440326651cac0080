"""Runners record the agent's trace into trace.json: nesting, clipping, masking, --no-trace.

The agents are real subprocesses (tests/fixtures/agents/trace_agent.py): one replying with
a JSON object whose steps nest three deep with a secret in a tool argument, one speaking
Claude Code's stream-json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runner_helpers import FIXTURES, FakeScorer, options, records, write_eval

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute
from eval_harness.trace.model import MASK, MAX_TEXT
from eval_harness.trace.reader import read_trace

AGENT = FIXTURES / "agents" / "trace_agent.py"
SECRET = "sk-live-abcdefghijklmnop0123456789"


def _run(tmp_path: Path, trace: bool = True) -> Path:
    cfg = write_eval(tmp_path, factors={"model": ["m"]}, n_cases=1,
                     runner={"type": "cli", "output_format": "json",
                             "command": f"{sys.executable} -S {AGENT} json {{case_id}}"})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs", trace=trace))
    [case] = summary.eval_dir.glob("*/cases/c00")
    return case


def test_cli_json_reply_nesting_clipping_masking(tmp_path: Path) -> None:
    case = _run(tmp_path)
    trace = read_trace(case)
    assert trace is not None and trace.dropped == 0
    plan, fetch, lookup = trace.steps
    assert (plan.kind, plan.name, plan.duration, plan.started) == (
        "llm", "planner", 0.5, "2026-12-01T10:00:00Z")
    [search] = plan.children
    [retrieval] = search.children
    assert (search.kind, search.name, retrieval.kind) == ("tool", "search", "retrieval")
    assert search.input == {"query": "c00", "api_key": MASK, "headers": {"Authorization": MASK},
                            "max_tokens": 50}
    assert retrieval.output == [{"id": "d1", "text": "one"}, {"id": "d2", "text": "two"}]
    assert len(fetch.output) < MAX_TEXT + 40 and fetch.output.endswith("[6000 more characters]")
    assert (lookup.kind, lookup.name, lookup.input) == ("tool", "lookup", {"q": "c00"})
    # the secret is in no file the harness writes (the raw reply in outputs.json included);
    # stdout.log is what the agent printed, masked only for registered secrets
    for path in case.rglob("*.json"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    [rec] = records(case.parents[2])
    assert rec["tool_calls"] == 3  # tool steps at any depth: search, fetch, lookup
    assert "trace" not in json.loads((case / "outputs.json").read_text())


def test_no_trace_stores_none_and_removes_an_old_one(tmp_path: Path) -> None:
    case = _run(tmp_path)
    assert (case / "trace.json").is_file()
    cfg = tmp_path / "eval.yaml"
    execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs", trace=False, force=True))
    assert not (case / "trace.json").exists() and read_trace(case) is None
    [rec] = records(case.parents[2])
    assert rec["tool_calls"] == 3  # the count is still recorded


def test_claude_code_stream_json_nests_subagent_steps(tmp_path: Path) -> None:
    cfg = write_eval(tmp_path, factors={"model": ["m"]}, n_cases=1,
                     runner={"type": "claude-code", "output_format": "stream-json",
                             "command": [sys.executable, "-S", str(AGENT), "stream"]},
                     execution={"prompt": "go {{ case_id }}"})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    [rec] = records(summary.eval_dir)
    assert rec["status"] == "ok" and rec["composite"] == 1.0 and rec["cost_usd"] == 0.01
    [case] = summary.eval_dir.glob("*/cases/c00")
    trace = read_trace(case)
    assert trace is not None
    text, task = trace.steps
    assert (text.kind, text.output) == ("llm", "I will delegate.")
    assert (task.name, task.input, task.output) == ("Task", {"prompt": "read the file",
                                                             "token": MASK}, "done reading")
    [read] = task.children
    assert (read.kind, read.name, read.output) == ("tool", "Read", "file text")
    assert rec["tool_calls"] == 2
