"""Ctrl-C while a worker is stuck in user Python code (a judge) still ends the run."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from runner_helpers import options, records, write_eval

from eval_harness.judges.scorer import build_scorer
from eval_harness.matrix.experiment import prepare
from eval_harness.runner import engine as engine_mod
from eval_harness.runner.engine import execute


def test_ctrl_c_with_a_judge_stuck_in_python_returns_within_the_bound(
        tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stuckjudge.py").write_text(
        "import _thread, threading, time\n"
        "RELEASE = threading.Event()\n"
        "def judge(outputs):\n"
        "    time.sleep(0.05)\n"
        "    _thread.interrupt_main()  # Ctrl-C while this judge is still busy\n"
        "    RELEASE.wait(20)\n"
        "    return True\n")
    cfg = write_eval(tmp_path, factors={"model": ["m1"]}, n_cases=1,
                     runner={"type": "cli", "command": "/bin/echo hi"})
    text = cfg.read_text() + ("judges:\n- {name: stuck, module: stuckjudge, function: judge, "
                              "timeout: 30}\n")
    cfg.write_text(text)
    exp = prepare(cfg)
    scorer = build_scorer(exp)
    monkeypatch.setattr(engine_mod, "INTERRUPT_JOIN_S", 0.5)
    # a test run started in the background may inherit SIGINT ignored: use Python's handler
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            execute(exp, scorer, options(tmp_path / "runs"))
        assert time.monotonic() - start < 5.0  # not the 20 s the judge would take
        assert records(tmp_path / "runs" / "t") == []  # nothing half-judged was recorded
    finally:
        sys.modules["stuckjudge"].RELEASE.set()  # let the abandoned call end
        for t in [t for t in threading.enumerate() if t.name == "code-judge-call"]:
            t.join(5)
