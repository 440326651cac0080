"""``orchestrate show --trace`` and ``--no-trace`` through the CLI, with the fixture agent
that emits nested steps (a real subprocess)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from tests.conftest import run_cli

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "trace_agent.py"


def _config(tmp_path: Path) -> Path:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c00", "input": {"q": "x"}}]))
    cfg = {"name": "tr", "matrix": {"factors": {"model": ["m"]}},
           "runner": {"type": "cli", "output_format": "json",
                      "command": f"{sys.executable} -S {AGENT} json {{case_id}}"},
           "dataset": {"path": "cases.yaml"},
           "judges": [{"name": "searched", "tool_called": {"name": "search",
                                                           "args": {"query": "c00"}}},
                      {"name": "few", "max_steps": {"max": 3, "kind": "tool"}}]}
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_show_trace_text_and_json(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, _, err = run_cli("--config", str(_config(tmp_path)), "--runs-dir", str(runs),
                           "--no-analysis", "--no-judge-check")
    assert code == 0, err
    code, out, err = run_cli("show", str(runs / "tr"), "--case", "c00", "--trace")
    assert code == 0, err
    assert "searched  True" in out and "few       True  3 tool steps, limit 3" in out
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == "trace: 5 step(s)")
    tree = lines[start + 1:start + 6]
    assert tree[0].startswith("     llm planner  0.5 s")
    assert tree[1].startswith("       tool search  0.2 s  in {")  # nested one level
    assert '"api_key": "***"' in tree[1] and "sk-live" not in out
    assert tree[2].startswith("         retrieval index")  # two levels
    assert tree[3].startswith("     tool fetch") and tree[3].endswith("…")  # cut for display
    code, out, _ = run_cli("show", str(runs / "tr"), "--case", "c00", "--trace", "--json")
    [view] = json.loads(out)
    assert [s["name"] for s in view["trace"]["steps"]] == ["planner", "fetch", "lookup"]


def test_no_trace_flag(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, _, err = run_cli("--config", str(_config(tmp_path)), "--runs-dir", str(runs),
                           "--no-analysis", "--no-judge-check", "--no-trace")
    assert code == 0, err
    assert not list(runs.glob("tr/*/cases/c00/trace.json"))
    [rec] = [json.loads(p.read_text()) for p in runs.glob("tr/*/cases/c00/record.json")]
    assert rec["scores"]["searched"]["value"] is True  # judged on the in-memory trace
    code, out, _ = run_cli("show", str(runs / "tr"), "--case", "c00", "--trace")
    assert code == 0 and "trace: none stored" in out
