"""Run user Python code (``check`` judges, the python runner's function) in child processes.

User code may end the process: ``os._exit`` in a check used to end the whole run with
exit 0, no message and no records. Here it ends a child; the call becomes an error with a
reason (``the user code ended its process (exit code 3)``) and the run goes on with a fresh
child. A call past its timeout, or cancelled (Ctrl-C, SIGTERM), kills its child, so
nothing keeps running in the background (a thread could not be stopped).

Children are persistent (one request at a time each, reused), started with
``python -m eval_harness._util.isolated_child`` (tens of ms, once per concurrent caller), and
killed at exit. Protocol: :mod:`eval_harness._util.isolated_child`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_harness._util.isolated_child import _HEADER, write_frame

_POLL_S = 0.05
_START_S = 60.0  # a child that has not said "ready" by then is broken
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


@dataclass(frozen=True)
class Outcome:
    """How an isolated call ended.

    ``status``: ok (``value``), error (the code raised: ``error_type``, ``message``,
    ``last_line``), died (the process ended: ``exit_code``), timeout, cancelled."""

    status: str
    value: Any = None
    error_type: str = ""
    message: str = ""
    last_line: str = ""
    exit_code: int | None = None

    def reason(self, timeout: float | None = None) -> str:
        """A one-line reason for anything but ok."""
        if self.status == "error":
            return self.last_line
        if self.status == "died":
            return (f"the user code ended its process (exit code {self.exit_code}; os._exit, "
                    "a fatal signal or a crash); the run goes on")
        if self.status == "timeout":
            return f"timeout after {timeout:g}s" if timeout is not None else "timeout"
        return self.status


_LINE_MAX = 64 * 1024


def _forward_stderr(stream: Any) -> None:
    """Copy a child's stderr to ours line by line, secrets masked (``redact``)."""
    from eval_harness._util.redact import redact

    with contextlib.suppress(OSError, ValueError):
        for line in iter(lambda: stream.readline(_LINE_MAX), b""):
            sys.stderr.write(redact(line.decode("utf-8", "replace")))
            sys.stderr.flush()


class _Child:
    def __init__(self) -> None:
        from eval_harness._util.child_env import child_env

        env = child_env()
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "eval_harness._util.isolated_child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, close_fds=True)
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        if stdin is None or stdout is None or stderr is None:  # pragma: no cover
            raise RuntimeError("no pipes to the user-code process")
        # the user code's prints and tracebacks: through the secret mask, never straight
        # onto the terminal (an inherited fd 2 bypassed it)
        threading.Thread(target=_forward_stderr, args=(stderr,), daemon=True,
                         name="user-code-stderr").start()
        self.stdin = stdin
        self.fd = stdout.fileno()
        ready = self._read_frame(time.monotonic() + _START_S, None)  # startup is not
        if not (isinstance(ready, tuple) and ready[:1] == ("ready",)):  # the user's time
            self.kill()
            raise RuntimeError(f"the user-code process did not start ({ready})")

    def _read_frame(self, deadline: float | None, cancel: threading.Event | None) -> Any:
        """One reply, or ``eof`` / ``timeout`` / ``cancelled``."""
        head = self._read_exact(_HEADER.size, deadline, cancel)
        if isinstance(head, str):
            return head
        body = self._read_exact(_HEADER.unpack(head)[0], None, None)
        return body if isinstance(body, str) else pickle.loads(body)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout):  # stderr: its forwarder's
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _read_exact(self, n: int, deadline: float | None,
                    cancel: threading.Event | None) -> bytes | str:
        """``n`` bytes, or ``eof`` / ``timeout`` / ``cancelled``."""
        buf = bytearray()
        while len(buf) < n:
            if cancel is not None and cancel.is_set():
                return "cancelled"
            wait = _POLL_S if cancel is not None else 1.0
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return "timeout"
                wait = min(wait, left)
            try:
                ready, _, _ = select.select([self.fd], [], [], wait)
                if not ready:
                    continue
                chunk = os.read(self.fd, n - len(buf))
            except (OSError, ValueError):  # killed by shutdown() meanwhile
                return "eof"
            if not chunk:
                return "eof"
            buf += chunk
        return bytes(buf)

    def call(self, request: tuple[Any, ...], timeout: float | None,
             cancel: threading.Event | None) -> Outcome:
        try:
            write_frame(self.stdin, request)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError):
            return self._died()
        deadline = None if timeout is None else time.monotonic() + timeout
        reply = self._read_frame(deadline, cancel)
        if isinstance(reply, str):
            return self._died() if reply == "eof" else Outcome(reply)
        if reply[0] == "ok":
            return Outcome("ok", value=reply[1])
        return Outcome("error", error_type=reply[1], message=reply[2], last_line=reply[3])

    def _died(self) -> Outcome:
        try:
            code = self.proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            code = None
        return Outcome("died", exit_code=code)


class Pool:
    """Idle children shared by every caller; a caller takes one for one request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Child] = []
        self._all: set[_Child] = set()

    def call(self, request: tuple[Any, ...], timeout: float | None = None,
             cancel: threading.Event | None = None) -> Outcome:
        """Run one request in a child; see :class:`Outcome`."""
        with self._lock:
            child = self._idle.pop() if self._idle else None
        if child is None:
            child = _Child()
            with self._lock:
                self._all.add(child)
        out = child.call(request, timeout, cancel)
        if out.status in ("ok", "error"):
            with self._lock:
                self._idle.append(child)
        else:  # died, or stopped mid-call: this child is done for
            child.kill()
            with self._lock:
                self._all.discard(child)
        return out

    def shutdown(self) -> None:
        """Kill every child (idle or busy)."""
        with self._lock:
            children, self._all, self._idle = list(self._all), set(), []
        for child in children:
            child.kill()


POOL = Pool()
atexit.register(POOL.shutdown)
