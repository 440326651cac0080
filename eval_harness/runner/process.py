"""Run one subprocess safely: own process group, timeout TERM -> grace -> KILL, no deadlock.

Output goes straight from the child to ``stdout.log`` / ``stderr.log`` (the kernel writes
the file, so there is no pipe to fill and nothing to drain, however much the child prints
and whatever grandchildren inherit the descriptors). Under ``--verbose`` the output is
teed instead: pipes read to EOF by two threads, each line written to the log and echoed to
the terminal with the case id as a prefix. (subprocess-tee has no timeout and no
process-group kill, so it cannot honour the TERM/KILL contract; this tee is ~20 lines.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: bytes of stdout kept in memory for parsing (the log on disk keeps everything)
MAX_CAPTURE = 8 * 1024 * 1024
#: bytes read from the end of a larger stdout (the final JSON line usually lives there)
TAIL_CAPTURE = 1024 * 1024


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


def read_capped(path: Path, limit: int = MAX_CAPTURE) -> tuple[str, str, bool]:
    """(head, tail, truncated) of a log file, decoded leniently."""
    try:
        size = os.stat(path).st_size
        if size == 0:
            return "", "", False
        with open(path, "rb") as fh:
            head = fh.read(limit)
            tail = b""
            if size > limit:
                fh.seek(max(limit, size - TAIL_CAPTURE))
                tail = fh.read()
    except OSError:
        return "", "", False
    return (head.decode("utf-8", "replace"), tail.decode("utf-8", "replace"), size > limit)


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _tee(src: IO[bytes], sink: IO[bytes], prefix: str, echo: IO[str]) -> None:
    for line in iter(src.readline, b""):
        sink.write(line)
        echo.write(f"{prefix}{line.decode('utf-8', 'replace').rstrip()}\n")
    src.close()


class ProcessGroup:
    """Runs subprocesses and remembers the live ones so they can all be stopped at once."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._cancelled = False

    def cancel_all(self, grace: float = 2.0) -> None:
        """TERM every live process group, KILL what is left after ``grace`` seconds."""
        with self._lock:
            self._cancelled = True
            live = list(self._live)
        for proc in live:
            _kill_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in live:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_group(proc, signal.SIGKILL)

    def run(
        self, argv: list[str] | str, *, cwd: Path, env: Mapping[Any, Any], timeout: float,
        grace: float, stdout_path: Path, stderr_path: Path, stdin_data: bytes | None = None,
        shell: bool = False, tee_prefix: str | None = None,
    ) -> ProcessOutcome:
        """Run to completion, timeout or cancellation; logs land in the two paths."""
        start = time.monotonic()
        threads: list[threading.Thread] = []
        with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
            tee = tee_prefix is not None
            try:
                proc = subprocess.Popen(
                    argv, cwd=cwd, env=env, shell=shell,
                    stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE if tee else out,
                    stderr=subprocess.PIPE if tee else err,
                    start_new_session=True,  # own process group: TERM/KILL reach grandchildren
                )
            except OSError as exc:
                return ProcessOutcome(None, False, False, time.monotonic() - start, "", "", "",
                                      False, start_error=f"cannot start: {exc}")
            with self._lock:
                self._live.add(proc)
                cancelled = self._cancelled
            if cancelled:
                _kill_group(proc, signal.SIGKILL)
            if tee and proc.stdout is not None and proc.stderr is not None:
                for src, sink in ((proc.stdout, out), (proc.stderr, err)):
                    t = threading.Thread(target=_tee, args=(src, sink, tee_prefix, sys.stderr),
                                         daemon=True)
                    t.start()
                    threads.append(t)
            if stdin_data is not None and proc.stdin is not None:
                try:
                    proc.stdin.write(stdin_data)
                    proc.stdin.close()
                except (BrokenPipeError, OSError):
                    pass
            timed_out = False
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc, signal.SIGTERM)
                try:
                    proc.wait(grace)
                except subprocess.TimeoutExpired:
                    _kill_group(proc, signal.SIGKILL)
                    proc.wait()
            for t in threads:
                t.join(grace + 1.0)
            with self._lock:
                self._live.discard(proc)
                cancelled = self._cancelled
        latency = time.monotonic() - start
        head, tail, truncated = read_capped(stdout_path)
        err_head, _, _ = read_capped(stderr_path, 256 * 1024)
        return ProcessOutcome(proc.returncode, timed_out, cancelled and not timed_out, latency,
                              head, err_head, tail, truncated)
