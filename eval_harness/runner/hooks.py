"""``hooks`` (agent-eval-harness): shell commands around the run and around each cell.

Phases: ``before_all`` (once, before any cell; its failure stops the run with exit 2 and
nothing run), ``before_each`` / ``after_each`` (around each cell's call, in the cell's
workspace), ``before_scoring`` (after the call, before the cell's judges), ``after_all``
(once, after the last cell, also after a failure). Each hook runs as ``bash -c COMMAND``
in a session (process group) of its own, with its ``timeout`` (then TERM, then KILL of
its process group); when it ends, whatever it left running in that group (``sleep 300 &``)
is ended too, so nothing a hook starts outlives it; its output goes to
``<runs>/<eval>/hooks/<phase>[.<case>].<i>.log``. The log passes through the secret mask when the hook ends, as
the agent's logs do (``eval_harness._util.redact``). ``condition`` is a shell test: the hook
runs when it exits 0. ``on_failure: fail`` (the default) makes a failed ``before_each`` or
``before_scoring`` hook an errored cell (with the reason), never a score; ``after_*``
failures are logged and never fail anything, as there.

Environment, as agent-eval-harness sets it: ``AGENT_EVAL_WORKSPACE`` (the runs directory of
the eval), ``AGENT_EVAL_RUN_ID`` (the eval name; per cell the cell's run id),
``AGENT_EVAL_CONFIG``, ``AGENT_EVAL_PROJECT_ROOT`` (the working directory),
``AGENT_EVAL_MODEL``; per cell also ``CASE_ID``, ``CASE_WORKSPACE``, ``CASE_SOURCE_DIR``
and ``CASE_INPUT`` (the workspace's input.yaml).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eval_harness._util.child_env import child_env
from eval_harness._util.file_modes import create_file, make_dirs
from eval_harness._util.redact import redact_file
from eval_harness.config.blocks import HookEntry
from eval_harness.errors import UsageError
from eval_harness.runner.contract import RunRequest, RunResult

GRACE_S = 5.0


class HookFailed(Exception):
    """A hook with ``on_failure: fail`` exited non-zero or timed out."""


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def _run_one(entry: HookEntry, env: Mapping[str, str], cwd: Path, log: Path) -> str | None:
    """None on success, else what went wrong."""
    if entry.condition:
        try:
            test = subprocess.run(["bash", "-c", entry.condition], env=child_env(env, base={}),
                                  cwd=cwd,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=30, check=False)
        except subprocess.TimeoutExpired:
            return None  # a condition that cannot decide skips the hook, as there
        if test.returncode != 0:
            return None
    make_dirs(log.parent)
    try:
        with open(create_file(log), "wb") as out:
            proc = subprocess.Popen(["bash", "-c", entry.command], env=child_env(env, base={}),
                                    cwd=cwd,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                code = proc.wait(timeout=entry.timeout)
            except subprocess.TimeoutExpired:
                end_group(proc)
                return f"timed out after {entry.timeout}s"
            finally:  # what it left running in the background dies with it
                end_group(proc)
    finally:  # the same secret mask as the agent's own logs (eval_harness._util.redact)
        redact_file(log)
    return None if code == 0 else f"exit code {code}"


def _group_alive(pgid: int) -> bool:
    """True while a live (not zombie) process is in group ``pgid``. Where /proc exists it
    is read: a TERMed member stays a zombie until its new parent reaps it, which can take
    seconds, and signalling a zombie still succeeds."""
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in "ZX":
                return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed its user: still there, not ours to signal
        return False
    return True


def end_group(proc: subprocess.Popen[bytes], grace_s: float = GRACE_S) -> None:
    """End the hook's whole process group (its own session: ``start_new_session``): TERM,
    up to ``grace_s`` for it to go, then KILL. A hook's ``sleep 300 &`` never outlives
    the hook, whether the hook ended, failed or timed out."""
    pgid = proc.pid
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is None or _group_alive(pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
        else:
            return
        deadline = time.monotonic() + (grace_s if sig == signal.SIGTERM else 5.0)
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.05)
            if proc.poll() is not None and not _group_alive(pgid):
                return


def run_phase(entries: Sequence[HookEntry], phase: str, env: Mapping[str, str], cwd: Path,
              log_dir: Path, case_id: str | None = None, *, safe: bool = False) -> None:
    """Run a phase's hooks in order; raise HookFailed on the first failing ``fail`` hook
    (never when ``safe``)."""
    suffix = f".{_safe(case_id)}" if case_id else ""
    for i, entry in enumerate(entries):
        problem = _run_one(entry, env, cwd, log_dir / f"{phase}{suffix}.{i}.log")
        if problem and entry.on_failure == "fail" and not safe:
            label = entry.description or entry.command.splitlines()[0][:60]
            raise HookFailed(f"{phase} hook `{label}` failed: {problem}")


def base_env(config_path: Path, eval_dir: Path, name: str, model: Any) -> dict[str, str]:
    """The variables every hook sees."""
    return child_env({"AGENT_EVAL_WORKSPACE": str(eval_dir.resolve()),
                      "AGENT_EVAL_RUN_ID": name, "AGENT_EVAL_CONFIG": str(config_path),
                      "AGENT_EVAL_PROJECT_ROOT": str(Path.cwd()),
                      "AGENT_EVAL_MODEL": "" if model is None else str(model)})


def run_global(phase: str, exp: Any, eval_dir: Path) -> None:
    """``before_all`` (a failure is a UsageError: exit 2, nothing run) or ``after_all``."""
    hooks = exp.loaded.config.hooks
    entries = getattr(hooks, phase, []) if hooks is not None else []
    if not entries:
        return
    env = base_env(exp.loaded.path, eval_dir, exp.name, exp.loaded.config.models.skill)
    try:
        run_phase(entries, phase, env, Path.cwd(), eval_dir / "hooks",
                  safe=phase == "after_all")
    except HookFailed as exc:
        raise UsageError(str(exc), hint=f"see {eval_dir / 'hooks'}") from None


class HookedRunner:
    """A runner with ``before_each`` / ``after_each`` / ``before_scoring`` around each call."""

    def __init__(self, inner: Any, config: Any, config_path: Path, eval_dir: Path,
                 name: str) -> None:
        self.inner, self.hooks = inner, config.hooks
        self.config_path, self.eval_dir, self.name = config_path, eval_dir, name

    def __getattr__(self, attr: str) -> Any:  # preflight, procs, ... of the wrapped runner
        return getattr(self.inner, attr)

    def cancel_all(self) -> None:
        """Stop the wrapped runner's calls."""
        self.inner.cancel_all()

    def run(self, request: RunRequest) -> RunResult:
        """The hooks and the call; a failing ``fail`` hook makes the cell errored."""
        case_dir = Path(os.path.abspath(request.case_dir))
        workspace = case_dir / "workspace"
        make_dirs(workspace)
        source = request.case_files
        env = {**base_env(self.config_path, self.eval_dir, str(case_dir.parent.parent.name),
                          request.model),
               "CASE_ID": request.case_id, "CASE_WORKSPACE": str(workspace),
               "CASE_SOURCE_DIR": str(source.resolve()) if source is not None else "",
               "CASE_INPUT": str(workspace / "input.yaml")}
        logs = self.eval_dir / "hooks"
        try:
            run_phase(self.hooks.before_each, "before_each", env, workspace, logs,
                      request.case_id)
        except HookFailed as exc:
            return RunResult(failure="error", reason=str(exc))
        try:
            result = self.inner.run(request)
        finally:
            run_phase(self.hooks.after_each, "after_each", env, workspace, logs,
                      request.case_id, safe=True)
        if result.ok:
            try:
                run_phase(self.hooks.before_scoring, "before_scoring", env, workspace, logs,
                          request.case_id)
            except HookFailed as exc:
                result.failure, result.reason = "error", str(exc)
        return result
