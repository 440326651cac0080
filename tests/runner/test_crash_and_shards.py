"""The orchestrator as a real process: SIGKILL at random moments, concurrent shards, Ctrl-C."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from runner_helpers import REPO, agent_command, write_eval


def _default_sigint() -> None:
    # a test run started in the background by a non-interactive shell inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: give the child the default
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _orchestrate(cfg: Path, runs: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(REPO / "orchestrate.py"), "--config", str(cfg), "--runs-dir",
         str(runs), "--no-judge-check", "--no-analysis", "--concurrency", "8", *extra],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint)


def _check_store(eval_dir: Path, expected: int) -> set[tuple[str, int, str]]:
    """Every record parses, belongs to its run dir, and no cell is counted twice."""
    keys = []
    for path in eval_dir.glob("*/cases/*/record.json"):
        rec = json.loads(path.read_text())  # a torn record would raise here
        run = json.loads((path.parents[2] / "run.json").read_text())
        assert (rec["condition_id"], rec["replication"]) == (run["condition_id"], run["replication"])
        assert rec["case_id"] == path.parent.name and rec["status"] == "ok", rec
        assert (path.parent / "outputs.json").exists()  # written before the record
        keys.append((rec["condition_id"], rec["replication"], rec["case_id"]))
    assert len(keys) == len(set(keys))
    assert len(keys) <= expected
    return set(keys)


def test_sigkill_at_random_moments_then_resume(tmp_path: Path) -> None:
    # each cell takes >= 30 ms, so at concurrency 8 at most ~270 cells/s land: the overshoot
    # past a kill target (poll + glob + random delay, < 60 ms) stays near 16 cells, and four
    # kills at most 30 cells apart cannot finish the 200 cells however fast the machine is
    cfg = write_eval(tmp_path, factors={"model": ["a", "b"], "effort": ["lo", "hi"]}, n_cases=50,
                     runner={"type": "cli", "command": "/bin/sleep 0.03"})
    runs = tmp_path / "runs"
    rng = random.Random(7)
    done_before = 0
    for _ in range(4):
        # kill once a random number of further cells has landed (plus a random delay), so
        # the kill lands mid-run however fast or slow the machine is
        target = done_before + rng.randint(5, 30)
        proc = _orchestrate(cfg, runs)
        deadline = time.monotonic() + 30
        while (len(list((runs / "t").glob("*/cases/*/record.json"))) < target
               and time.monotonic() < deadline and proc.poll() is None):
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.03))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = len(_check_store(runs / "t", 200))
        assert done >= done_before  # finished work is never lost
        done_before = done
    assert 0 < done_before < 200  # the kills really landed mid-run
    proc = _orchestrate(cfg, runs)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert len(_check_store(runs / "t", 200)) == 200
    assert f"{200 - done_before} of 200 cells run" in err.decode()
    final = _orchestrate(cfg, runs)
    _, err = final.communicate(timeout=60)
    assert final.returncode == 0 and "0 of 200 cells run" in err.decode()
    # temp files of writes cut short by SIGKILL were cleaned when their cells reran
    assert not list((runs / "t").glob("*/cases/*/.record.json.*.tmp"))


def test_two_concurrent_shards_then_whole_matrix(tmp_path: Path) -> None:
    cfg = write_eval(tmp_path, factors={"model": ["a", "b"], "effort": ["lo", "hi"]}, n_cases=15,
                     replications=2,
                     runner={"type": "cli", "command": "/bin/echo answer-{case_id}"})
    runs = tmp_path / "runs"
    shards = [_orchestrate(cfg, runs, "--shard", f"{k}/2") for k in (1, 2)]
    for proc in shards:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        assert "60 of 60 cells run" in err.decode()
    assert len(_check_store(runs / "t", 120)) == 120
    assert len(list((runs / "t").glob("*/run.json"))) == 8  # shards shared the run dirs
    statuses = {json.loads(p.read_text())["status"] for p in (runs / "t").glob("*/run.json")}
    assert statuses == {"complete"}
    whole = _orchestrate(cfg, runs)
    _, err = whole.communicate(timeout=60)
    assert whole.returncode == 0 and "0 of 120 cells run" in err.decode(), err.decode()
    assert len(_check_store(runs / "t", 120)) == 120


def test_ctrl_c_exits_130_and_keeps_finished_work(tmp_path: Path) -> None:
    cfg = write_eval(tmp_path, factors={"mode": ["slow"]}, n_cases=40,
                     runner={"type": "cli", "command": agent_command(), "output_format": "json"})
    runs = tmp_path / "runs"
    proc = _orchestrate(cfg, runs)
    deadline = time.monotonic() + 20
    while not list((runs / "t").glob("*/cases/*/record.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    kept = _check_store(runs / "t", 40)
    assert 0 < len(kept) < 40
    run = json.loads(next((runs / "t").glob("*/run.json")).read_text())
    assert run["status"] == "aborted"
    again = _orchestrate(cfg, runs)
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0 and f"{40 - len(kept)} of 40 cells run" in err.decode()
