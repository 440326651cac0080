"""The child side of :mod:`eval_harness._util.isolated_calls`: run user code, answer over a pipe.

Started as ``python -m eval_harness._util.isolated_child``. Requests and replies are pickled
frames (8-byte big-endian length + payload) on stdin / the original stdout; the user
code's own ``print`` goes to stderr (fd 1 is pointed at fd 2), so it cannot corrupt a
frame. Imports stay minimal (no pandas, no pydantic) so a child starts in tens of ms.

Requests: ``("check", source, where, path, args)`` runs a compiled ``check`` body;
``("call", module, function, path, args, kwargs)`` calls ``module:function``;
``("probe", module, function, path)`` only imports it. Replies: ``("ok", value)`` or
``("error", type name, message, last line)``. ``SystemExit`` is an error like any other;
``os._exit`` ends the child, which the parent reports as an errored call.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")


def read_frame(stream: BinaryIO) -> Any:
    """One pickled frame, or None at end of file."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def write_frame(stream: BinaryIO, obj: Any) -> None:
    """Write one pickled frame and flush."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _last_line(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return text[-1] if text else type(exc).__name__


_CHECKS: dict[tuple[str, str], Callable[..., Any]] = {}


def _check(source: str, where: str) -> Callable[..., Any]:
    fn = _CHECKS.get((source, where))
    if fn is None:
        namespace: dict[str, Any] = {}
        exec(compile(source, f"<judge {where}>", "exec"), namespace)  # the user's own code
        fn = _CHECKS[(source, where)] = namespace["__check__"]
    return fn


def _function(module: str, function: str, path: str) -> Callable[..., Any]:
    if path and path not in sys.path:
        sys.path.insert(0, path)
    try:
        mod = importlib.import_module(module)
    except BaseException as exc:
        raise ImportError(f"cannot import {module}: {type(exc).__name__}: {exc}") from None
    fn = getattr(mod, function, None)
    if not callable(fn):
        raise TypeError(f"{module}:{function} is not a function")
    return fn  # type: ignore[no-any-return]


def handle(request: tuple[Any, ...]) -> Any:
    """Run one request; return its value (exceptions propagate to :func:`serve`)."""
    kind = request[0]
    if kind == "check":
        _, source, where, path, args = request
        if path and path not in sys.path:  # as for module judges: the config dir imports
            sys.path.insert(0, path)
        return _check(source, where)(*args)
    if kind == "probe":
        _, module, function, path = request
        _function(module, function, path)
        return None
    if kind == "call":
        _, module, function, path, args, kwargs = request
        value = _function(module, function, path)(*args, **kwargs)
        return dict(value) if isinstance(value, Mapping) else value
    raise ValueError(f"unknown request {kind!r}")


def _orphan_watch(parent: int) -> None:
    # the parent died (SIGKILL, crash) while user code runs here: do not linger
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


def serve() -> None:
    """The request loop (until stdin closes)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # user prints go to stderr, never into a reply frame
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # user code reading stdin gets EOF, never a request frame
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    threading.Thread(target=_orphan_watch, args=(os.getppid(),), daemon=True).start()
    write_frame(replies, ("ready",))  # the caller's timeout starts after this
    while True:
        request = read_frame(requests)
        if request is None:
            return
        try:
            reply: tuple[Any, ...] = ("ok", handle(request))
        except BaseException as exc:
            reply = ("error", type(exc).__name__, str(exc), _last_line(exc))
        try:
            write_frame(replies, reply)
        except Exception as exc:
            write_frame(replies, ("error", type(exc).__name__, str(exc),
                                  f"the value returned cannot be sent back: {_last_line(exc)}"))


if __name__ == "__main__":
    serve()
