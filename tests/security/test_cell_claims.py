"""Two unsharded orchestrators on one runs directory, and --retry-errors under clock skew:
every cell is paid for once."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute
from tests.runner.runner_helpers import FakeScorer, options, records, write_eval

AGENT = """import os, sys, time
with open(os.environ["CALLS"], "a") as fh:
    fh.write(sys.argv[1] + "\\n")
time.sleep(float(os.environ.get("NAP", "0")))
if os.path.exists(os.environ["FAIL"]):
    sys.exit(3)
print("answer-" + sys.argv[1])
"""


def _setup(tmp: Path, monkeypatch, n_cases: int) -> Path:
    agent = tmp / "agent.py"
    agent.write_text(AGENT)
    monkeypatch.setenv("CALLS", str(tmp / "calls.txt"))
    monkeypatch.setenv("FAIL", str(tmp / "fail-flag"))
    return write_eval(tmp, factors={"model": ["m"]}, n_cases=n_cases,
                      runner={"type": "cli", "command": f"{sys.executable} -S {agent} {{case_id}}"})


def _calls(tmp: Path) -> list[str]:
    path = tmp / "calls.txt"
    return path.read_text().split() if path.exists() else []


def test_two_orchestrators_never_run_a_cell_twice(tmp_path: Path, monkeypatch) -> None:
    cfg = _setup(tmp_path, monkeypatch, n_cases=6)
    monkeypatch.setenv("NAP", "0.3")
    start = threading.Barrier(2)

    def orchestrate() -> None:
        exp = prepare(cfg)
        start.wait()
        execute(exp, FakeScorer(), options(tmp_path / "runs", concurrency=3))

    threads = [threading.Thread(target=orchestrate) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    calls = _calls(tmp_path)
    assert sorted(calls) == [f"c{i:02d}" for i in range(6)], calls  # each exactly once
    recs = records(tmp_path / "runs" / "t")
    assert len(recs) == 6 and all(r["status"] == "ok" for r in recs)


def test_retry_errors_under_clock_skew_pays_once(tmp_path: Path, monkeypatch) -> None:
    cfg = _setup(tmp_path, monkeypatch, n_cases=2)
    (tmp_path / "fail-flag").write_text("")
    execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    eval_dir = tmp_path / "runs" / "t"
    [run] = [p for p in eval_dir.iterdir() if p.is_dir()]
    # the same errored cells, copied in from a machine whose clock runs years ahead
    skewed = eval_dir / "zz-from-skewed-machine"
    shutil.copytree(run, skewed)
    for rec_path in skewed.glob("cases/*/record.json"):
        rec = json.loads(rec_path.read_text())
        rec["finished_at"] = "2099-01-01T00:00:00.000000+00:00"
        rec_path.write_text(json.dumps(rec))
    (tmp_path / "fail-flag").unlink()
    before = len(_calls(tmp_path))
    for _ in range(3):  # each --retry-errors run must see the fixed cells as done
        execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs", retry_errors=True))
    assert len(_calls(tmp_path)) - before == 2  # each errored cell retried once, not thrice
    fresh = [json.loads(p.read_text()) for p in run.glob("cases/*/record.json")]
    assert all(r["status"] == "ok" and r["finished_at"] > "2099" and r["clock_note"]
               for r in fresh)
