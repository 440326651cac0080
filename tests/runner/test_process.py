"""ProcessGroup + the shared watchdog: timeouts TERM then KILL the group, cancel, capture."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eval_harness.runner import process
from eval_harness.runner.process import MAX_CAPTURE, ProcessGroup, ProcessOutcome
from eval_harness.runner.watchdog import WATCHDOG

PY = sys.executable
FAST = process._FAST_START  # the direct fork_exec start exists on this interpreter
MODE = {"fast": False}  # the `mode` fixture switches _run between the two starts


@pytest.fixture(params=["popen", "fast"] if FAST else ["popen"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every test below runs with Popen and (where available) with the fast start; in fast
    mode Popen is made to fail, so the fast path is the one exercised."""
    MODE["fast"] = request.param == "fast"
    if MODE["fast"]:
        def no_popen(*a: object, **k: object) -> None:
            raise AssertionError("Popen used on the fast path")
        monkeypatch.setattr(subprocess, "Popen", no_popen)
    yield request.param
    MODE["fast"] = False


def _run(group: ProcessGroup, tmp: Path, argv: list[str], **kw: float) -> ProcessOutcome:
    # fast mode: the program resolved to a path, as CliRunner passes it
    exe = shutil.which(argv[0]) if MODE["fast"] else None
    return group.run(argv, cwd=tmp, env=dict(os.environ), timeout=kw.get("timeout", 20.0),
                     grace=kw.get("grace", 0.5), stdout_path=tmp / "stdout.log",
                     stderr_path=str(tmp / "stderr.log"), executable=exe)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_exit_code_and_both_logs(tmp_path: Path, mode: str) -> None:
    out = _run(ProcessGroup(), tmp_path, ["sh", "-c", "echo hi; echo oops >&2; exit 3"])
    assert (out.exit_code, out.timed_out, out.cancelled) == (3, False, False)
    assert (out.stdout, out.stderr) == ("hi\n", "oops\n")
    assert (tmp_path / "stdout.log").read_text() == "hi\n"


def test_timeout_terms_the_whole_group(tmp_path: Path, mode: str) -> None:
    # the shell prints its background grandchild's pid, then waits forever
    out = _run(ProcessGroup(), tmp_path, ["sh", "-c", "sleep 30 & echo $!; wait"], timeout=0.3)
    assert out.timed_out and out.exit_code == -15 and not out.cancelled
    grandchild = int(out.stdout.split()[0])
    for _ in range(200):  # TERM was sent to the group; the grandchild goes with it
        if not _alive(grandchild):
            break
        time.sleep(0.01)
    assert not _alive(grandchild)


def test_term_ignored_then_kill_after_grace(tmp_path: Path, mode: str) -> None:
    code = "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    start = time.monotonic()
    out = _run(ProcessGroup(), tmp_path, [PY, "-S", "-c", code], timeout=1.5, grace=0.4)
    assert out.timed_out and out.exit_code == -9
    assert time.monotonic() - start >= 1.5 + 0.4  # KILL only after the grace


def test_cancel_all_stops_live_processes(tmp_path: Path, mode: str) -> None:
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


def test_large_stdout_is_capped_with_tail(tmp_path: Path, mode: str) -> None:
    code = ("import sys; w = sys.stdout.write; [w('x' * 1023 + '\\n') for _ in range(9 * 1024)];"
            " w('{\"last\": 1}\\n')")
    out = _run(ProcessGroup(), tmp_path, [PY, "-S", "-c", code])
    assert out.exit_code == 0 and out.stdout_truncated
    assert len(out.stdout) == MAX_CAPTURE and out.stdout_tail.endswith('{"last": 1}\n')


def test_finished_watches_do_not_pile_up(tmp_path: Path, mode: str) -> None:
    group = ProcessGroup()
    for _ in range(400):  # long deadlines: every entry would stay without compaction
        assert _run(group, tmp_path, ["true"], timeout=600.0).exit_code == 0
    assert len(WATCHDOG._heap) < 400
    assert WATCHDOG._finished_in_heap <= len(WATCHDOG._heap)


def test_start_error_is_reported(tmp_path: Path) -> None:
    out = _run(ProcessGroup(), tmp_path, ["no-such-program-eval-harness"])
    assert out.exit_code is None and out.start_error and "cannot start" in out.start_error


@pytest.mark.skipif(not FAST, reason="no direct fork_exec start on this interpreter")
def test_fast_start_errors_env_and_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_popen(*a: object, **k: object) -> None:
        raise AssertionError("Popen used on the fast path")
    monkeypatch.setattr(subprocess, "Popen", no_popen)
    group = ProcessGroup()
    kw = {"timeout": 20.0, "grace": 0.5, "stdout_path": tmp_path / "o.log",
          "stderr_path": tmp_path / "e.log"}
    missing = group.run(["x"], cwd=tmp_path, env={}, executable=str(tmp_path / "nope"), **kw)
    assert missing.exit_code is None and missing.start_error is not None
    assert "cannot start" in missing.start_error and "nope" in missing.start_error
    no_dir = group.run(["true"], cwd=tmp_path / "gone", env={}, executable="/bin/true", **kw)
    assert no_dir.start_error is not None and "gone" in no_dir.start_error
    # env_list is what the child gets; the shell form goes through /bin/sh -c
    out = group.run("echo $EH_A-$EH_B; pwd", cwd=tmp_path, env={"EH_A": "1"}, shell=True,
                    env_list=[b"EH_A=1", b"EH_B=two"], **kw)
    assert out.exit_code == 0 and out.stdout == f"1-two\n{tmp_path}\n"
    assert group.run("exit 7", cwd=tmp_path, env={}, shell=True, **kw).exit_code == 7


def test_log_cut_never_keeps_the_head_of_a_secret(tmp_path: Path) -> None:
    """Attack (issue 28): a log cut at max_log_bytes inside a key kept its first characters
    (the cut ran before the mask, which then no longer matched the partial key)."""
    from eval_harness._util import redact

    secret = "sk-FAKE-abcdefghijklmnopqrstuvwxyz"
    redact.register([secret])
    script = f"import sys; sys.stdout.write('x' * 100 + {secret!r} + 'y' * 100)"
    ProcessGroup().run([PY, "-c", script], cwd=tmp_path, env=dict(os.environ), timeout=20.0,
                       grace=0.5, stdout_path=tmp_path / "stdout.log",
                       stderr_path=tmp_path / "stderr.log", max_log_bytes=112)
    log = (tmp_path / "stdout.log").read_text()
    assert "log cut at 112 bytes" in log
    assert secret[:6] not in log and log.startswith("x" * 100 + "***")
