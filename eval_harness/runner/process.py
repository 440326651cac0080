"""Run one subprocess safely: own process group, timeout TERM -> grace -> KILL, no deadlock.

Output goes straight from the child to ``stdout.log`` / ``stderr.log`` (the kernel writes
the file, so there is no pipe to fill and nothing to drain, however much the child prints
and whatever grandchildren inherit the descriptors). Under ``--verbose`` the output is
teed instead: pipes read to EOF by two threads, each line written to the log and echoed to
the terminal with the case id as a prefix. (subprocess-tee has no timeout and no
process-group kill, so it cannot honour the TERM/KILL contract; this tee is ~20 lines.)

Starting: without stdin data or tee, a program given as a path is started by
:func:`_fork_exec` (what Popen calls underneath, minus Popen's Python work: half the
parent's CPU per start); otherwise by ``subprocess.Popen``. Not ``os.posix_spawn``: it
keeps the GIL while the child execs (~0.2 ms per start with CPython 3.11), which with 8
worker threads cost ~15 % throughput. stdin is one ``/dev/null`` descriptor opened once
per group (``DEVNULL`` opens one per call).

Waiting: each worker blocks in ``waitid`` (the GIL is released, the exit is seen at once);
timeouts are enforced by one shared :class:`~eval_harness.runner.watchdog.Watchdog` thread.
``Popen.wait(timeout)`` would poll with sleeps of 0.5 to 50 ms instead, so a 1 ms process
was noticed several ms late. The watch is released after the child is a zombie but before
it is reaped, so a signal can never reach a recycled process-group id.
"""

from __future__ import annotations

import contextlib
import dataclasses
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

from eval_harness._util.file_modes import file_mode
from eval_harness._util.redact import redact_bytes, redact_file
from eval_harness._util.safe_text import safe_text
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
    log_notes: tuple[str, ...] = ()  # logs cut at the per-cell cap, said in the record


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


def cap_log(path: str | Path, limit: int | None) -> str | None:
    """Cut a log past ``limit`` bytes to its first ``limit`` bytes plus a marker line; the
    note for the record, or None when nothing was cut. (Applied when the cell ends: while
    it runs, the kernel writes the log and the per-cell timeout bounds it.)"""
    if limit is None:
        return None
    try:
        size = os.path.getsize(path)
        if size <= limit:
            return None
        with open(path, "r+b") as fh:
            fh.truncate(limit)
            fh.seek(limit)
            fh.write(f"\n[eval_harness: log cut at {limit:,} bytes; {size - limit:,} bytes "
                     "dropped (execution.max_log_bytes)]\n".encode())
    except OSError:
        return None
    return (f"{os.path.basename(path)} cut at {limit:,} of {size:,} bytes "
            "(execution.max_log_bytes)")


def _tee(src: IO[bytes], sink_fd: int, prefix: str, echo: IO[str]) -> None:
    for line in iter(src.readline, b""):
        line = redact_bytes(line)  # secrets masked in the log and on the terminal
        os.write(sink_fd, line)
        text = safe_text(line.decode("utf-8", "replace").rstrip())  # no raw ESC to the tty
        echo.write(f"{prefix}{text}\n")
    src.close()


def _wait_exited(pid: int, proc: subprocess.Popen[bytes] | None) -> None:
    """Block until child ``pid`` has exited, without reaping it (its pid stays reserved)."""
    if not hasattr(os, "waitid"):  # pragma: no cover - non-Linux: reaping is all there is
        if proc is not None:  # (the fast start is never used there)
            proc.wait()
        return
    with contextlib.suppress(ChildProcessError):  # reaped elsewhere: nothing to wait for
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


def _reap(pid: int) -> int:
    """Reap a fast-started child; its exit code (negative: killed by that signal)."""
    try:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:  # reaped elsewhere: unknown, reported as Popen does
        return 0


class ProcessGroup:
    """Runs subprocesses and remembers the live ones so they can all be stopped at once."""

    def __init__(self) -> None:
        self._live: set[Watch] = set()
        self._lock = threading.Lock()
        self._cancelled = False
        self._null_fd = -1

    def cancel_all(self, grace: float = 2.0) -> None:
        """TERM every live process group, KILL what is left after ``grace`` seconds."""
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
        executable: str | None = None, env_list: list[bytes] | None = None,
        max_log_bytes: int | None = None,
    ) -> ProcessOutcome:
        """Run to completion, timeout or cancellation; logs land in the two paths.

        ``executable`` (optional) is the already-resolved program, sparing the PATH search.
        ``env_list`` (optional) is ``env`` already as ``b"KEY=value"`` entries (it must
        hold the same variables), sparing its encoding per call.
        """
        start = time.monotonic()
        threads: list[threading.Thread] = []
        out = os.open(stdout_path, _LOG_FLAGS, file_mode())
        try:
            err = os.open(stderr_path, _LOG_FLAGS, file_mode())
        except BaseException:
            os.close(out)
            raise
        try:
            outcome = self._run(argv, cwd, env, timeout, grace, out, err, stdin_data, shell,
                                tee_prefix, executable, start, threads, env_list)
        finally:
            os.close(out)
            os.close(err)
        # masked before the cut: a cut inside a key would leave its head unmasked
        redact_file(stdout_path)  # a no-op unless a secret is registered and present
        redact_file(stderr_path)
        notes = tuple(n for p in (stdout_path, stderr_path)
                      if (n := cap_log(p, max_log_bytes)) is not None)
        return dataclasses.replace(outcome, log_notes=notes) if notes else outcome

    def _run(self, argv: list[str] | str, cwd: str | Path, env: Mapping[Any, Any],
             timeout: float, grace: float, out: int, err: int, stdin_data: bytes | None,
             shell: bool, tee_prefix: str | None, executable: str | None, start: float,
             threads: list[threading.Thread], env_list: list[bytes] | None) -> ProcessOutcome:
        tee = tee_prefix is not None
        proc: subprocess.Popen[bytes] | None = None
        try:
            fast = None if tee or stdin_data is not None else _fast_args(argv, shell, executable)
            if fast is not None:
                pid = _fork_exec(fast[0], fast[1], os.fspath(cwd),
                                 _env_list(env) if env_list is None else env_list,
                                 self._devnull(), out, err)
            else:
                proc = subprocess.Popen(
                    argv, executable=executable, cwd=cwd, env=env, shell=shell,
                    stdin=subprocess.PIPE if stdin_data is not None else self._devnull(),
                    stdout=subprocess.PIPE if tee else out,
                    stderr=subprocess.PIPE if tee else err,
                    start_new_session=True,  # own process group: TERM/KILL reach grandchildren
                )
                pid = proc.pid
        except OSError as exc:
            return ProcessOutcome(None, False, False, time.monotonic() - start, "", "", "",
                                  False, start_error=f"cannot start: {exc}")
        watch = WATCHDOG.watch(pid, timeout, grace)
        try:
            with self._lock:
                self._live.add(watch)
                cancelled = self._cancelled
            if cancelled:
                WATCHDOG.signal(watch, signal.SIGKILL)
            if proc is not None:
                self._feed(proc, tee_prefix, out, err, stdin_data, threads)
            _wait_exited(pid, proc)
            # The cell is over: kill what the agent left behind in its process group
            # (background grandchildren). The leader is a zombie until reaped below, so
            # the group id cannot have been recycled. (A grandchild that called setsid
            # has left the group and is out of reach.)
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
        finally:
            WATCHDOG.release(watch)  # before reaping: no signal can hit a recycled pgid
            with self._lock:
                self._live.discard(watch)
                cancelled = self._cancelled
        code = proc.wait() if proc is not None else _reap(pid)
        for t in threads:
            t.join(grace + 1.0)
        latency = time.monotonic() - start
        timed_out = watch.timed_out
        head, tail, truncated = read_capped_fd(out)
        err_head = read_capped_fd(err, 256 * 1024)[0]
        return ProcessOutcome(code, timed_out, cancelled and not timed_out, latency,
                              head, err_head, tail, truncated)

    def _devnull(self) -> int:
        # one read-only /dev/null per group, dup2'd onto each child's stdin
        fd = self._null_fd
        if fd < 0:
            with self._lock:
                if self._null_fd < 0:
                    self._null_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
                fd = self._null_fd
        return fd

    @staticmethod
    def _feed(proc: subprocess.Popen[bytes], tee_prefix: str | None, out: int, err: int,
              stdin_data: bytes | None, threads: list[threading.Thread]) -> None:
        """Start the tee threads and write stdin (the Popen path)."""
        if tee_prefix is not None and proc.stdout is not None and proc.stderr is not None:
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


def _fast_args(argv: list[str] | str, shell: bool,
               executable: str | None) -> tuple[str, list[str]] | None:
    """(program path, argv) when the fast start applies, else None (Popen is used)."""
    if not _FAST_START:
        return None
    if shell:
        return ("/bin/sh", ["/bin/sh", "-c", argv]) if isinstance(argv, str) else None
    if isinstance(argv, str) or not argv:
        return None
    program = executable or argv[0]
    # no PATH search here: the program must be a path (CliRunner resolves it once)
    return (program, list(argv)) if os.sep in program else None


def _env_list(env: Mapping[Any, Any]) -> list[bytes]:
    out = []
    for k, v in env.items():
        k = k if isinstance(k, bytes) else os.fsencode(k)
        if b"=" in k:
            raise ValueError("illegal environment variable name")
        out.append(k + b"=" + (v if isinstance(v, bytes) else os.fsencode(v)))
    return out


def _fork_exec(program: str, argv: list[str], cwd: str, env_list: list[bytes], stdin: int,
               out: int, err: int) -> int:
    """Start a child as ``Popen(argv, executable=program, cwd=cwd, env=env, stdin=stdin,
    stdout=out, stderr=err, start_new_session=True)`` would, without the Popen object.

    Popen's own Python work (argument checks, re-encoding every environment variable,
    the object) is half the parent's CPU for a short process; this calls the same
    CPython primitive directly: vfork with the GIL dropped, close the other descriptors,
    setsid, chdir, exec, failures reported through a close-on-exec pipe. The primitive is
    private and its signature changes between versions, so it is used only on the one
    it was written for (see ``_FAST_START``); everything else takes Popen.
    (``os.posix_spawn`` is no substitute: it keeps the GIL while the child execs and has
    no chdir.) Raises OSError like Popen when the program cannot be started.
    """
    import _posixsubprocess

    errpipe_read, errpipe_write = os.pipe()
    lows = []
    while errpipe_write < 3:  # stdio closed in the parent: keep the pipe off fds 0-2
        lows.append(errpipe_write)
        errpipe_write = os.dup(errpipe_write)
    for low in lows:
        os.close(low)
    try:
        try:
            pid: int = _posixsubprocess.fork_exec(
                argv, [os.fsencode(program)], True, (errpipe_write,), cwd, env_list,
                stdin, -1, -1, out, -1, err, errpipe_read, errpipe_write,
                True, True, -1, None, None, None, -1, None,  # type: ignore[arg-type]
                _USE_VFORK)
        finally:
            os.close(errpipe_write)
        data = b""
        while chunk := os.read(errpipe_read, 50_000):  # EOF at exec (close-on-exec)
            data += chunk
    finally:
        os.close(errpipe_read)
    if data:  # the child failed before exec and wrote why: "name:hex errno:detail"
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        _, hex_errno, detail = [*data.split(b":", 2), b"", b""][:3]
        try:
            number = int(hex_errno, 16)
        except ValueError:
            number = 0
        if number:
            # "noexec": it failed before exec, i.e. in chdir (as Popen reads it)
            where = cwd if detail.startswith(b"noexec") else program
            raise OSError(number, os.strerror(number), where)
        raise OSError(detail.decode("utf-8", "replace") or "cannot start")
    return pid


#: the direct fork_exec signature above is CPython 3.11's (checked against
#: ``subprocess.Popen._execute_child``); other versions use Popen
_FAST_START = (sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)
               and os.name == "posix" and hasattr(os, "waitid"))
_USE_VFORK = bool(getattr(subprocess, "_USE_VFORK", True))
