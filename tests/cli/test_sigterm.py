"""SIGTERM (CI cancel, `timeout`, Kubernetes) is handled like Ctrl-C: agents in flight are
stopped, finished work is kept, run.json says aborted/terminated, exit 143."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

AGENT = """\
import os, sys, time
with open(sys.argv[1], "a") as fh:
    fh.write(f"{os.getpid()}\\n")
if sys.argv[2] != "c00":
    time.sleep(60)
print("done")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_sigterm_stops_agents_keeps_finished_work_and_exits_143(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    pids = tmp_path / "pids.txt"
    cases = [{"id": f"c{i:02d}", "input": {"q": "x"}} for i in range(4)]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    cfg = {"name": "t", "matrix": {"factors": {"model": ["m1"]}},
           "runner": {"type": "cli",
                      "command": f"{sys.executable} -S agent.py {pids} {{case_id}}"},
           "dataset": {"path": "cases.yaml"}, "execution": {"timeout": 120, "kill_grace": 1}}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "orchestrate.py"), "--config", str(tmp_path / "eval.yaml"),
         "--runs-dir", str(runs), "--no-analysis", "--concurrency", "4", "--order", "grid"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    # wait until the quick case is recorded and the three slow agents are running
    while time.monotonic() < deadline and not (
            list(runs.glob("t/*/cases/c00/record.json"))
            and pids.exists() and len(pids.read_text().split()) >= 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err.decode()
    assert "terminated" in err.decode()
    agent_pids = [int(p) for p in pids.read_text().split()]
    time.sleep(0.2)
    assert [p for p in agent_pids if _alive(p)] == []  # no orphaned agents
    [run_json] = runs.glob("t/*/run.json")
    run = json.loads(run_json.read_text())
    assert run["status"] == "aborted" and run["aborted_reason"] == "terminated"
    kept = [json.loads(p.read_text()) for p in runs.glob("t/*/cases/*/record.json")]
    assert [r["case_id"] for r in kept] == ["c00"]  # the finished cell is kept, no others
