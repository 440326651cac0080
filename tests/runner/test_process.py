"""ProcessGroup + the shared watchdog: timeouts TERM then KILL the group, cancel, capture."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from eval_harness.runner.process import MAX_CAPTURE, ProcessGroup, ProcessOutcome
from eval_harness.runner.watchdog import WATCHDOG

PY = sys.executable


def _run(group: ProcessGroup, tmp: Path, argv: list[str], **kw: float) -> ProcessOutcome:
    return group.run(argv, cwd=tmp, env=dict(os.environ), timeout=kw.get("timeout", 20.0),
                     grace=kw.get("grace", 0.5), stdout_path=tmp / "stdout.log",
                     stderr_path=str(tmp / "stderr.log"))


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_exit_code_and_both_logs(tmp_path: Path) -> None:
    out = _run(ProcessGroup(), tmp_path, ["sh", "-c", "echo hi; echo oops >&2; exit 3"])
    assert (out.exit_code, out.timed_out, out.cancelled) == (3, False, False)
    assert (out.stdout, out.stderr) == ("hi\n", "oops\n")
    assert (tmp_path / "stdout.log").read_text() == "hi\n"


def test_timeout_terms_the_whole_group(tmp_path: Path) -> None:
    # the shell prints its background grandchild's pid, then waits forever
    out = _run(ProcessGroup(), tmp_path, ["sh", "-c", "sleep 30 & echo $!; wait"], timeout=0.3)
    assert out.timed_out and out.exit_code == -15 and not out.cancelled
    grandchild = int(out.stdout.split()[0])
    for _ in range(200):  # TERM was sent to the group; the grandchild goes with it
        if not _alive(grandchild):
            break
        time.sleep(0.01)
    assert not _alive(grandchild)


def test_term_ignored_then_kill_after_grace(tmp_path: Path) -> None:
    code = "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    start = time.monotonic()
    out = _run(ProcessGroup(), tmp_path, [PY, "-S", "-c", code], timeout=1.5, grace=0.4)
    assert out.timed_out and out.exit_code == -9
    assert time.monotonic() - start >= 1.5 + 0.4  # KILL only after the grace


def test_cancel_all_stops_live_processes(tmp_path: Path) -> None:
    group = ProcessGroup()
    outcomes: list[ProcessOutcome] = []
    t = threading.Thread(target=lambda: outcomes.append(_run(group, tmp_path, ["sleep", "30"])))
    t.start()
    while not group._live:  # wait until the child is registered
        time.sleep(0.005)
    group.cancel_all(grace=1.0)
    t.join(10)
    assert outcomes and outcomes[0].cancelled and not outcomes[0].timed_out
    assert outcomes[0].exit_code == -15
    late = _run(group, tmp_path, ["sleep", "30"])  # started after the cancel: killed at once
    assert late.cancelled and late.exit_code == -9


def test_large_stdout_is_capped_with_tail(tmp_path: Path) -> None:
    code = ("import sys; w = sys.stdout.write; [w('x' * 1023 + '\\n') for _ in range(9 * 1024)];"
            " w('{\"last\": 1}\\n')")
    out = _run(ProcessGroup(), tmp_path, [PY, "-S", "-c", code])
    assert out.exit_code == 0 and out.stdout_truncated
    assert len(out.stdout) == MAX_CAPTURE and out.stdout_tail.endswith('{"last": 1}\n')


def test_finished_watches_do_not_pile_up(tmp_path: Path) -> None:
    group = ProcessGroup()
    for _ in range(400):  # long deadlines: every entry would stay without compaction
        assert _run(group, tmp_path, ["true"], timeout=600.0).exit_code == 0
    assert len(WATCHDOG._heap) < 400
    assert WATCHDOG._finished_in_heap <= len(WATCHDOG._heap)


def test_start_error_is_reported(tmp_path: Path) -> None:
    out = _run(ProcessGroup(), tmp_path, ["no-such-program-eval-harness"])
    assert out.exit_code is None and out.start_error and "cannot start" in out.start_error
