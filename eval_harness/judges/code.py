"""Code judges: an inline ``check`` body, or ``module`` + ``function``.

A ``check`` body runs as ``def check(outputs, input, expected, arguments)`` (``arguments``
is the same resolved input, under agent-eval-harness's name) and returns
``(value, rationale)`` or a bare value. An exception errors the sample with the
exception's last line (``ZeroDivisionError: division by zero``).

A ``module`` judge is imported (the config's directory is on ``sys.path``) and called with
the keyword arguments its signature accepts among ``outputs``, ``input``, ``expected``,
``arguments``, ``annotations`` and ``case_id``.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eval_harness.errors import ConfigError
from eval_harness.judges.validate import compile_check
from eval_harness.judges.values import JudgeFailure, Outcome

_PATH_LOCK = threading.Lock()
_ARG_NAMES = ("outputs", "input", "expected", "arguments", "annotations", "case_id")


def last_line(exc: BaseException) -> str:
    """The exception's last line, as Python prints it."""
    lines = traceback.format_exception_only(type(exc), exc)
    text = "".join(lines).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def split_result(result: Any) -> Outcome:
    """``(value, rationale)`` or a bare value -> Outcome."""
    if isinstance(result, tuple):
        if len(result) != 2:
            raise JudgeFailure(f"a judge returns (value, rationale); got a {len(result)}-tuple")
        value, why = result
        return Outcome(value, None if why is None else str(why))
    return Outcome(result)


class CheckJudge:
    """An inline Python ``check`` body."""

    def __init__(self, body: str, where: str) -> None:
        namespace: dict[str, Any] = {}
        exec(compile_check(body, where), namespace)  # the user's own code, by design
        self._fn: Callable[..., Any] = namespace["__check__"]

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """Run the body on private copies (a body mutating ``outputs`` affects nothing else)."""
        args = copy.deepcopy((ctx["outputs"], ctx["input"], ctx["expected"]))
        try:
            result = self._fn(args[0], args[1], args[2], copy.deepcopy(ctx["input"]))
        except Exception as exc:
            raise JudgeFailure(last_line(exc)) from None
        return split_result(result)


class FunctionJudge:
    """``module`` + ``function``."""

    def __init__(self, module: str, function: str, base_dir: Path, where: str) -> None:
        with _PATH_LOCK:
            if str(base_dir) not in sys.path:
                sys.path.insert(0, str(base_dir))
        try:
            mod = importlib.import_module(module)
        except Exception as exc:
            raise ConfigError(f"cannot import judge module `{module}`: {last_line(exc)}",
                              path=where + ".module",
                              hint="modules resolve relative to the config directory") from None
        fn = getattr(mod, function, None)
        if not callable(fn):
            raise ConfigError(f"`{module}` has no function `{function}`", path=where + ".function")
        self._fn = fn
        params = inspect.signature(fn).parameters
        takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        self._names = [n for n in _ARG_NAMES if takes_all or n in params]

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """Call the function with the arguments it names."""
        kwargs = {n: copy.deepcopy(ctx["input"] if n == "arguments" else ctx.get(n))
                  for n in self._names}
        try:
            result = self._fn(**kwargs)
        except Exception as exc:
            raise JudgeFailure(last_line(exc)) from None
        return split_result(result)
