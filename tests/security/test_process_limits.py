"""Process findings: grandchildren left running after a cell ends."""

from __future__ import annotations

import os
import time
from pathlib import Path

from eval_harness.runner.process import ProcessGroup


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie is dead, just not yet reaped by init


def test_grandchildren_are_killed_when_the_cell_ends(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    group = ProcessGroup()
    outcome = group.run(["/bin/sh", "-c", f"sleep 30 & echo $! > {pidfile}; echo done"],
                        cwd=tmp_path, env=dict(os.environ), timeout=10, grace=1,
                        stdout_path=tmp_path / "out.log", stderr_path=tmp_path / "err.log")
    assert outcome.exit_code == 0 and outcome.stdout.strip() == "done"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 2
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid), "the background grandchild outlived its cell"


def test_log_is_capped_with_a_note_in_the_record(tmp_path: Path) -> None:
    import json
    import sys

    from eval_harness.matrix.experiment import prepare
    from eval_harness.runner.engine import execute
    from tests.runner.runner_helpers import FakeScorer, options, records, write_eval

    agent = tmp_path / "noisy.py"
    agent.write_text("import sys\nsys.stdout.write('y' * 300_000)\n"
                     "sys.stderr.write('e' * 5000)\nprint()\nprint('answer')\n")
    cfg = write_eval(tmp_path, factors={"model": ["m"]}, n_cases=1,
                     runner={"type": "cli", "command": f"{sys.executable} {agent}"},
                     execution={"max_log_bytes": 100_000})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    [rec] = records(summary.eval_dir)
    case = next(summary.eval_dir.glob("*/cases/c00"))
    size = (case / "stdout.log").stat().st_size
    assert 100_000 < size < 100_200, size
    assert "log cut at 100,000 bytes" in (case / "stdout.log").read_text()[-200:]
    assert rec["notes"] == ["stdout.log cut at 100,000 of 300,008 bytes "
                            "(execution.max_log_bytes)"], json.dumps(rec)[:300]
    assert (case / "stderr.log").stat().st_size == 5000  # under the cap: untouched
