"""Code judges: an inline ``check`` body, or ``module`` + ``function``.

A ``check`` body runs as ``def check(outputs, input, expected, arguments)`` (``arguments``
is the same resolved input, under agent-eval-harness's name) and returns
``(value, rationale)`` or a bare value. An exception errors the sample with the
exception's last line (``ZeroDivisionError: division by zero``). It runs in a child
process (:mod:`eval_harness._util.isolated_calls`): ``sys.exit`` / ``os._exit`` / a crash errors the
sample, never the run, and a call past its timeout is killed.

A ``module`` judge is imported (the config's directory is on ``sys.path``) and called with
the keyword arguments its signature accepts among ``outputs``, ``input``, ``expected``,
``arguments``, ``annotations`` and ``case_id``.

Both run with a time limit (the judge's ``timeout``, 60 s by default): a call that
overruns errors that sample's judge (``timed out after Ns``); a module judge's call is
abandoned in its thread; until it returns, further calls of the same judge are errored at once instead of
piling up threads (see :mod:`eval_harness._util.time_limit`). A hung judge never hangs the run.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import importlib.machinery
import inspect
import sys
import textwrap
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eval_harness._util.time_limit import Guard, call_with_timeout
from eval_harness.errors import ConfigError
from eval_harness.judges.moved import current_module
from eval_harness.judges.values import JudgeFailure, Outcome


def check_source(body: str) -> str:
    """The function a ``check`` body becomes."""
    return "def __check__(outputs, input, expected, arguments):\n" + textwrap.indent(body, "    ")


@functools.lru_cache(maxsize=256)
def compile_check(body: str, where: str) -> Any:
    """Compile a ``check`` body as the body of ``def check(outputs, input, expected)``.
    Cached: every condition builds the same judges (1,000 conditions at ``--dry-run``); a
    code object is immutable, and a body that fails raises each time (never cached)."""
    source = check_source(body)
    try:
        code = compile(source, f"<judge {where}>", "exec")
    except SyntaxError as exc:
        line = (exc.lineno or 2) - 1
        raise ConfigError(f"check code does not compile: {exc.msg} (line {line} of the body)",
                          path=where, hint="the body runs inside a function; `return value, why`"
                          ) from None
    if not _returns_a_value(ast.parse(source).body[0]):
        raise ConfigError("check code never returns a value (every sample would error)",
                          path=where, hint="end the body with `return value, why`, e.g. "
                                           "`return ok, \"reason\"`")
    return code


def _returns_a_value(func: ast.AST) -> bool:
    """Whether a ``return <value>`` appears in the function itself (not in a nested def,
    lambda or class, whose returns are not the check's)."""
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


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


class _Timed:
    """Calls user code under a time limit, at most one abandoned call at a time."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._guard = Guard()

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``; JudgeFailure on an exception or an overrun."""
        if self._guard.busy():
            raise JudgeFailure(f"not run: an earlier call of this judge is still running past "
                               f"its {self.timeout:g}s timeout")
        out = call_with_timeout(lambda: fn(*args, **kwargs), (), self.timeout,
                                on_abandon=self._guard.abandoned, name="code-judge-call")
        if not out.finished:
            raise JudgeFailure(f"timed out after {self.timeout:g}s")
        if out.error is not None:  # any exception (even SystemExit) is a judge failure
            raise JudgeFailure(last_line(out.error)) from None
        return out.value


class CheckJudge:
    """An inline Python ``check`` body, run in a child process (:mod:`eval_harness._util.isolated_calls`):
    a body calling ``os._exit`` / ``sys.exit`` errors that sample, never the run; one past
    its timeout is killed."""

    def __init__(self, body: str, where: str, *, timeout: float = 60.0,
                 base_dir: Path | None = None) -> None:
        compile_check(body, where)  # a syntax error or no return: ConfigError now
        self._source = check_source(body)
        self._where = where
        self._path = str(base_dir) if base_dir is not None else ""
        self.timeout = timeout

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """Run the body on the sample (pickled to the child: private copies by design)."""
        from eval_harness._util.isolated_calls import POOL

        args = (ctx["outputs"], ctx["input"], ctx["expected"], ctx["arguments"])
        out = POOL.call(("check", self._source, self._where, self._path, args), self.timeout)
        if out.status == "ok":
            return split_result(out.value)
        if out.status == "timeout":
            raise JudgeFailure(f"timed out after {self.timeout:g}s")
        raise JudgeFailure(out.reason(self.timeout))


def _import_beside(module: str, base_dir: Path) -> Any:
    """Import ``module`` as the config's directory resolves it. A module found beside the
    config wins over one of the same name already imported from elsewhere: two evals in one
    process (tests, notebooks, the API) whose judge modules share a name (``myjudges``) would
    otherwise both get the first one, through importlib's ``sys.modules`` cache."""
    top = module.partition(".")[0]
    with _PATH_LOCK:
        if str(base_dir) in sys.path:
            sys.path.remove(str(base_dir))
        sys.path.insert(0, str(base_dir))  # first, so this config's modules shadow others
        spec = importlib.machinery.PathFinder.find_spec(top, [str(base_dir)])
        loaded = sys.modules.get(top)
        if spec is not None and loaded is not None and not _same_source(loaded, spec):
            for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
                del sys.modules[name]
        return importlib.import_module(module)


def _same_source(loaded: Any, spec: Any) -> bool:
    """Whether an imported module comes from the file (or package folder) ``spec`` finds."""
    origin = getattr(loaded, "__file__", None)
    return origin is not None and spec.origin is not None and \
        Path(origin).resolve() == Path(spec.origin).resolve()


class FunctionJudge:
    """``module`` + ``function``."""

    def __init__(self, module: str, function: str, base_dir: Path, where: str, *,
                 timeout: float = 60.0) -> None:
        self._timed = _Timed(timeout)
        try:
            mod = _import_beside(current_module(module), base_dir)
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
        self._params, self._takes_all = set(params), takes_all

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """Call the function with the arguments it names; a judge's own ``arguments``
        also arrive as keyword arguments (agent-eval-harness: ``fn(outputs, **arguments)``)."""
        kwargs = {n: copy.deepcopy(ctx.get(n)) for n in self._names}
        for key, value in (ctx.get("judge_kwargs") or {}).items():
            if (self._takes_all or key in self._params) and key not in _ARG_NAMES:
                kwargs[key] = copy.deepcopy(value)
        return split_result(self._timed.call(self._fn, **kwargs))
