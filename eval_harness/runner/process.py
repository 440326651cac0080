"""Run one subprocess safely: own process group, timeout TERM -> grace -> KILL, no deadlock.

Output goes straight from the child to ``stdout.log`` / ``stderr.log`` (the kernel writes
the file, so there is no pipe to fill and nothing to drain, however much the child prints
and whatever grandchildren inherit the descriptors). Under ``--verbose`` the output is
teed instead: pipes read to EOF by two threads, each line written to the log and echoed to
the terminal with the case id as a prefix. (subprocess-tee has no timeout and no
process-group kill, so it cannot honour the TERM/KILL contract; this tee is ~20 lines.)

Waiting: each worker blocks in ``waitid`` (the GIL is released, the exit is seen at once);
timeouts are enforced by one shared :class:`~eval_harness.runner.watchdog.Watchdog` thread.
``Popen.wait(timeout)`` would poll with sleeps of 0.5 to 50 ms instead, so a 1 ms process
was noticed several ms late. The watch is released after the child is a zombie but before
it is reaped, so a signal can never reach a recycled process-group id.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from eval_harness.runner.watchdog import WATCHDOG, Watch

#: bytes of stdout kept in memory for parsing (the log on disk keeps everything)
MAX_CAPTURE = 8 * 1024 * 1024
#: bytes read from the end of a larger stdout (the final JSON line usually lives there)
TAIL_CAPTURE = 1024 * 1024
_LOG_FLAGS = os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
_CANCEL_POLL_S = 0.005


@dataclass(frozen=True)
class ProcessOutcome:
    """How a subprocess ended."""

    exit_code: int | None  # negative: killed by that signal
    timed_out: bool
    cancelled: bool
    latency_s: float
    stdout: str
    stderr: str
    stdout_tail: str  # last TAIL_CAPTURE bytes when stdout was larger than MAX_CAPTURE
    stdout_truncated: bool
    start_error: str | None = None  # the program could not be started


def _pread_all(fd: int, n: int, offset: int) -> bytes:
    chunks: list[bytes] = []
    while n > 0:
        chunk = os.pread(fd, n, offset)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def read_capped_fd(fd: int, limit: int = MAX_CAPTURE) -> tuple[str, str, bool]:
    """(head, tail, truncated) of an open log file, decoded leniently; an empty file costs
    one ``fstat``."""
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return "", "", False
        head = _pread_all(fd, min(size, limit), 0)
        tail = b""
        if size > limit:
            start = max(limit, size - TAIL_CAPTURE)
            tail = _pread_all(fd, size - start, start)
    except OSError:
        return "", "", False
    return (head.decode("utf-8", "replace"), tail.decode("utf-8", "replace"), size > limit)


def read_capped(path: str | Path, limit: int = MAX_CAPTURE) -> tuple[str, str, bool]:
    """(head, tail, truncated) of a log file, decoded leniently."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return "", "", False
    try:
        return read_capped_fd(fd, limit)
    finally:
        os.close(fd)


def _tee(src: IO[bytes], sink_fd: int, prefix: str, echo: IO[str]) -> None:
    for line in iter(src.readline, b""):
        os.write(sink_fd, line)
        echo.write(f"{prefix}{line.decode('utf-8', 'replace').rstrip()}\n")
    src.close()


def _wait_exited(proc: subprocess.Popen[bytes]) -> None:
    """Block until ``proc`` has exited, without reaping it (its pid stays reserved)."""
    if not hasattr(os, "waitid"):  # pragma: no cover - non-Linux: reaping is all there is
        proc.wait()
        return
    with contextlib.suppress(ChildProcessError):  # reaped elsewhere: nothing to wait for
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)


class ProcessGroup:
    """Runs subprocesses and remembers the live ones so they can all be stopped at once."""

    def __init__(self) -> None:
        self._live: set[Watch] = set()
        self._lock = threading.Lock()
        self._cancelled = False

    def cancel_all(self, grace: float = 2.0) -> None:
        """TERM every live process group, KILL what is left after ``grace`` seconds."""
        import signal

        with self._lock:
            self._cancelled = True
            live = list(self._live)
        for watch in live:
            WATCHDOG.signal(watch, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(not w.done for w in live) and time.monotonic() < deadline:
            time.sleep(_CANCEL_POLL_S)
        for watch in live:
            WATCHDOG.signal(watch, signal.SIGKILL)  # a no-op for those that exited

    def run(
        self, argv: list[str] | str, *, cwd: str | Path, env: Mapping[Any, Any],
        timeout: float, grace: float, stdout_path: str | Path, stderr_path: str | Path,
        stdin_data: bytes | None = None, shell: bool = False, tee_prefix: str | None = None,
        executable: str | None = None,
    ) -> ProcessOutcome:
        """Run to completion, timeout or cancellation; logs land in the two paths.

        ``executable`` (optional) is the already-resolved program, sparing the PATH search.
        """
        start = time.monotonic()
        threads: list[threading.Thread] = []
        out = os.open(stdout_path, _LOG_FLAGS, 0o666)
        try:
            err = os.open(stderr_path, _LOG_FLAGS, 0o666)
        except BaseException:
            os.close(out)
            raise
        try:
            return self._run(argv, cwd, env, timeout, grace, out, err, stdin_data, shell,
                             tee_prefix, executable, start, threads)
        finally:
            os.close(out)
            os.close(err)

    def _run(self, argv: list[str] | str, cwd: str | Path, env: Mapping[Any, Any],
             timeout: float, grace: float, out: int, err: int, stdin_data: bytes | None,
             shell: bool, tee_prefix: str | None, executable: str | None, start: float,
             threads: list[threading.Thread]) -> ProcessOutcome:
        import signal

        tee = tee_prefix is not None
        try:
            proc = subprocess.Popen(
                argv, executable=executable, cwd=cwd, env=env, shell=shell,
                stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE if tee else out,
                stderr=subprocess.PIPE if tee else err,
                start_new_session=True,  # own process group: TERM/KILL reach grandchildren
            )
        except OSError as exc:
            return ProcessOutcome(None, False, False, time.monotonic() - start, "", "", "",
                                  False, start_error=f"cannot start: {exc}")
        watch = WATCHDOG.watch(proc.pid, timeout, grace)
        try:
            with self._lock:
                self._live.add(watch)
                cancelled = self._cancelled
            if cancelled:
                WATCHDOG.signal(watch, signal.SIGKILL)
            if tee and proc.stdout is not None and proc.stderr is not None:
                for src, sink in ((proc.stdout, out), (proc.stderr, err)):
                    t = threading.Thread(target=_tee, args=(src, sink, tee_prefix, sys.stderr),
                                         daemon=True)
                    t.start()
                    threads.append(t)
            if stdin_data is not None and proc.stdin is not None:
                try:  # a child that never reads is rescued by the watchdog (EPIPE then)
                    proc.stdin.write(stdin_data)
                    proc.stdin.close()
                except (BrokenPipeError, OSError):
                    pass
            _wait_exited(proc)
        finally:
            WATCHDOG.release(watch)  # before reaping: no signal can hit a recycled pgid
            with self._lock:
                self._live.discard(watch)
                cancelled = self._cancelled
        proc.wait()
        for t in threads:
            t.join(grace + 1.0)
        latency = time.monotonic() - start
        timed_out = watch.timed_out
        head, tail, truncated = read_capped_fd(out)
        err_head = read_capped_fd(err, 256 * 1024)[0]
        return ProcessOutcome(proc.returncode, timed_out, cancelled and not timed_out, latency,
                              head, err_head, tail, truncated)
