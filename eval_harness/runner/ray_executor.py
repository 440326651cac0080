"""``--executor ray``: cells run as Ray tasks on a cluster's workers; this process stays the
one driver.

What stays in the driver (the engine, unchanged): the plan and the resume index, claims,
every file of the run directory (records are written here, from the results the tasks
return), judges and their cache, progress, fail-fast on quota/auth, retries (one policy,
:mod:`eval_harness._util.retrying`: a retry is a new task), and whatever global limits the engine
applies (spend cap, concurrency). ``--concurrency`` is the number of cells in flight; the
cluster's CPUs bound how many run at once (one CPU per task).

What a task does (:func:`_run_cells`, on a worker; one cell, or a batch when the workers
are busy, :class:`~eval_harness.runner.ray_batcher.Batcher`): for each cell, build the condition's runner (cached per
config in the worker process), lay out a scratch case folder (the task's own, removed
when it ends, :func:`_task_scratch`) with the cell's ``input.json`` and the dataset
case's files (staged into the task: no shared filesystem is needed), run the cell, and
return the :class:`~eval_harness.runner.contract.RunResult` plus the files the runner wrote
there (``stdout.log``, ``stderr.log``, ``workspace/``, ``output/``), which the driver
writes into the real case folder before the record.

The config's folder (agent scripts, the python runner's module) reaches the workers as
Ray's ``working_dir`` (uploaded once per job; the runs directory, ``.git``, ``.venv`` and
``__pycache__`` are left out), and a task runs with it as ``{config_dir}``. The
environment variables the config names (``${VAR}``) are sent as the job's ``env_vars``.

Failures: a worker process or node that dies mid-cell makes Ray rerun the task
(``max_retries``, :data:`TASK_MAX_RETRIES`); past that the cell is a ``transient`` failure
for the engine's retry policy; Ctrl-C / a quota stop cancels the tasks in flight (the
worker stops the agent's processes) and records nothing for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval_harness._util.child_env import scrub_process
from eval_harness._util.procs import pid_alive
from eval_harness._util.redact import redact_bytes
from eval_harness.config.models import EvalConfig
from eval_harness.errors import UsageError
from eval_harness.runner.contract import Runner, RunRequest, RunResult
from eval_harness.runner.ray_batcher import Batcher
from eval_harness.runner.runner_types import build_runner

RAY_HINT = "pip install 'factorial-eval-harness[ray]' (on the driver and every worker)"
#: Ray reruns a task whose worker process or node died this many times
TASK_MAX_RETRIES = 3
#: seconds between checks for a cancel while waiting on a task
POLL_S = 1.0
#: staged dataset case folder: larger is refused (put big inputs in the config folder)
MAX_STAGED_BYTES = 64 * 1024 * 1024
#: never uploaded as the working_dir (gitignore-style, relative to the config folder)
EXCLUDES = (".git", ".venv", "venv", "__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")
#: ``{config_dir}`` in a task: the worker's copy of the config folder (its working_dir)
WORKING_DIR = "<working_dir>"
#: RunRequest fields a task is not sent as they are (rebuilt on the worker)
_LOCAL_FIELDS = ("config", "case_dir", "case_files", "config_dir")
_SENT_FIELDS = tuple(f.name for f in dataclasses.fields(RunRequest) if f.name not in _LOCAL_FIELDS)
#: written by the driver itself (begin_case, claims): not copied back from a worker
_DRIVER_FILES = frozenset({"input.json", ".claim"})


def import_ray() -> Any:
    """The ``ray`` module, or a UsageError (exit 2) with the install hint."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError(f"--executor ray needs the ray package ({exc})", hint=RAY_HINT) from None
    return ray


def _stage_dir(folder: Path | None) -> dict[str, bytes] | None:
    """The files of the dataset's case folder, by relative path (None: no folder)."""
    if folder is None or not folder.is_dir():
        return None
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            total += len(data)
            if total > MAX_STAGED_BYTES:
                raise UsageError(f"case folder {folder} holds more than "
                                 f"{MAX_STAGED_BYTES >> 20} MiB to send to a Ray worker",
                                 hint="keep large shared inputs in the config folder (sent "
                                 "once as the job's working_dir)")
            files[path.relative_to(folder).as_posix()] = data
    return files


def _lay_out(root: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (relative POSIX paths, as :func:`_collect` makes them) under root."""
    from eval_harness._util.atomic_files import write_bytes
    from eval_harness._util.file_modes import make_dirs

    base = os.fspath(root)
    for rel, data in files.items():
        parts = rel.split("/")
        if rel.startswith("/") or ".." in parts:
            raise ValueError(f"staged path {rel!r} leaves its folder")
        target = os.path.join(base, *parts)
        if len(parts) > 1:
            make_dirs(os.path.dirname(target))
        write_bytes(target, data)


def _collect(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but the driver's own (relative POSIX paths)."""
    out: dict[str, bytes] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and rel not in _DRIVER_FILES:
            out[rel] = path.read_bytes()
    return out


# --- worker side ---------------------------------------------------------------------
_WORKER_RUNNERS: dict[str, tuple[Runner, EvalConfig]] = {}
_WORKER_LOCK = threading.Lock()
#: this worker process's scratch folders: ``eh-cell-<pid>-<random>`` in its temp folder
_SCRATCH_PREFIX = "eh-cell-"


def _worker_runner(key: str, config: Any) -> tuple[Runner, EvalConfig]:
    """The worker process's runner for a config (built on its first cell; ``config`` is
    the EvalConfig or the ObjectRef it was put under)."""
    with _WORKER_LOCK:
        found = _WORKER_RUNNERS.get(key)
        if found is None:
            if not isinstance(config, EvalConfig):
                import ray

                config = ray.get(config)
            found = _WORKER_RUNNERS[key] = (build_runner(config), config)
        return found


def _sweep_dead(base: str) -> None:
    """Remove the scratch folders of worker processes that no longer exist (killed
    mid-task: SIGKILL runs no cleanup). A folder whose pid is alive again is left."""
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            pid = entry.name[len(_SCRATCH_PREFIX):].split("-", 1)[0]
            if (entry.name.startswith(_SCRATCH_PREFIX) and pid.isdigit()
                    and int(pid) != os.getpid() and not pid_alive(int(pid))):
                shutil.rmtree(entry.path, ignore_errors=True)


@contextmanager
def _task_scratch() -> Iterator[Path]:
    """A private scratch folder for one task, removed when the task ends (a Ray worker
    is ended without running atexit hooks, so nothing may wait for the process to exit).
    Each task first removes what killed workers left (:func:`_sweep_dead`: one scandir of
    the temp folder, shared by the cells of the batch)."""
    base = tempfile.gettempdir()
    _sweep_dead(base)
    root = tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-", dir=base)
    try:
        yield Path(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _empty(folder: Path) -> Path:
    """``folder``, emptied file by file where it exists: the cells of a task reuse one
    case folder (removing a folder costs as long as a trivial cell on a loaded disk)."""
    if folder.is_dir():
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    return folder


def _run_cell(scratch: Path, config_ref: Any, key: str, fields: dict[str, Any],
              config_dir: str, case_files: dict[str, bytes] | None
              ) -> tuple[RunResult, dict[str, bytes]]:
    """One attempt of one cell, in the task's scratch case folder."""
    from eval_harness.store.case_writer import begin_case

    runner, config = _worker_runner(key, config_ref)
    case_dir = _empty(scratch / "case")
    begin_case(case_dir, fields["input"])
    staged = None
    if case_files is not None:
        staged = _empty(scratch / "case-files")
        staged.mkdir(exist_ok=True)
        _lay_out(staged, case_files)
    here = RunRequest(**fields, config=config, case_dir=case_dir, case_files=staged,
                      config_dir=Path.cwd() if config_dir == WORKING_DIR else Path(config_dir))
    try:
        result = runner.run(here)
    except BaseException:  # cancelled (KeyboardInterrupt): stop the agent's processes
        runner.cancel_all()
        raise
    return result, _collect(case_dir)


def _run_cells(configs: dict[str, Any], cells: list[tuple[Any, ...]]
               ) -> list[tuple[RunResult, dict[str, bytes]]]:
    """The Ray task: the cells of one batch, one after the other (see :class:`~eval_harness.runner.ray_batcher.Batcher`).
    ``configs``: each config the batch uses once, by key; a cell is ``(key, request
    fields, config_dir, case files)``."""
    scrub_process()  # the cluster may have been started with the CI step files around
    out = []
    with _task_scratch() as scratch:
        for key, *args in cells:
            try:
                out.append(_run_cell(scratch, configs[key], key, *args))
            except Exception as exc:  # a bug in one cell is that cell's result, not the batch's
                out.append((RunResult(failure="error", reason=f"internal error on the Ray "
                                      f"worker: {type(exc).__name__}: {exc}"[:300]), {}))
    return out


# --- driver side ---------------------------------------------------------------------
class RayCellRunner:
    """A :class:`~eval_harness.runner.contract.Runner` whose ``run`` is a Ray task."""

    def __init__(self, config: EvalConfig, executor: RayExecutor) -> None:
        self.config = config
        self._ex = executor
        self._key = f"{id(config)}-{os.getpid()}"
        self._ref = executor.ray.put(config)  # sent inside the batch: a worker gets it once
        self._local: Runner | None = None
        self._cancelled = threading.Event()

    def preflight(self, config_dir: Path) -> Any:
        """The local runner's check (e.g. the python runner imports its function)."""
        self._local = self._local or build_runner(self.config)
        check = getattr(self._local, "preflight", None)
        return check(config_dir) if callable(check) else None

    def reply_bound(self, request: RunRequest) -> Any:
        """The local runner's spend-cap bound (runner/budget.py): the same call, elsewhere."""
        self._local = self._local or build_runner(self.config)
        bound = getattr(self._local, "reply_bound", None)
        return bound(request) if callable(bound) else None

    def run(self, request: RunRequest) -> RunResult:
        """Submit the cell, wait for it, write what it produced; never raise."""
        ray = self._ex.ray
        if self._cancelled.is_set():
            return RunResult(failure="error", reason="cancelled")
        sent = {name: getattr(request, name) for name in _SENT_FIELDS}
        future = self._ex.batcher.submit((self._key, self._ref, sent,
                                          self._ex.remote_config_dir(request.config_dir),
                                          _stage_dir(request.case_files)))
        try:
            while True:  # in short waits, so Ctrl-C reaches a waiting thread too
                try:
                    result, files = future.result(timeout=POLL_S)
                    break
                except FutureTimeout:
                    continue
        except (ray.exceptions.TaskCancelledError, CancelledError, KeyboardInterrupt):
            return RunResult(failure="error", reason="cancelled")
        except Exception as exc:  # worker/node lost past Ray's own retries, cluster gone
            if self._cancelled.is_set():
                return RunResult(failure="error", reason="cancelled")
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return RunResult(failure="transient",
                             reason=f"ray: {type(exc).__name__}: {first}"[:300])
        # the worker knows none of the secrets registered here: mask its logs now, as a
        # local cell's are (runner/process.py)
        files = {rel: redact_bytes(data) if rel.endswith(".log") else data
                 for rel, data in files.items()}
        _lay_out(Path(os.path.abspath(request.case_dir)), files)
        return result  # type: ignore[no-any-return]

    def cancel_all(self) -> None:
        """Cancel the tasks in flight (every runner's: they share the batches)."""
        self._cancelled.set()
        self._ex.batcher.cancel_all()


class RayExecutor:
    """The connection to a Ray cluster for one engine run."""

    def __init__(self, ray: Any, config_dir: Path, *, ship_code: bool) -> None:
        self.ray = ray
        self.config_dir = config_dir.resolve()
        self.ship_code = ship_code
        self.batcher = Batcher(ray, _run_cells, max_retries=TASK_MAX_RETRIES)

    def remote_config_dir(self, config_dir: Path) -> str:
        """``{config_dir}`` as a worker sees it: its working_dir when the folder is sent."""
        if self.ship_code and Path(config_dir).resolve() == self.config_dir:
            return WORKING_DIR
        return str(config_dir)

    def runner_factory(self, config: EvalConfig) -> Runner:
        """For :class:`~eval_harness.runner.engine.Engine` (one runner per config)."""
        return RayCellRunner(config, self)


def runtime_env(config_dir: Path, runs_dir: Path, env_names: list[str]) -> dict[str, Any]:
    """The job's runtime_env: the config folder (minus runs and caches) and the named
    environment variables that are set here."""
    excludes = list(EXCLUDES)
    runs = runs_dir.resolve()
    if runs.is_relative_to(config_dir.resolve()):
        excludes.append("/" + runs.relative_to(config_dir.resolve()).as_posix() + "/")
    env = {name: os.environ[name] for name in env_names if name in os.environ}
    return {"working_dir": str(config_dir), "excludes": excludes, "env_vars": env}


def refuse_unsupported(configs: Iterable[EvalConfig]) -> None:
    """ConfigError (exit 2, before anything runs) for what a task cannot do alone."""
    from eval_harness.errors import ConfigError

    for config in configs:
        if config.execution.steps:  # the steps of a case share one workspace folder
            raise ConfigError("execution.steps cannot run with executor ray: the steps of a "
                              "case share one workspace, a task has its own",
                              path="execution.executor", hint="use executor: local")


@contextmanager
def ray_executor(address: str | None, config_dir: Path, runs_dir: Path,
                 env_names: list[str]) -> Iterator[Callable[[EvalConfig], Runner]]:
    """Connect to (or start) a Ray cluster for the block; yield the runner factory.

    ``address``: None starts a local cluster (or joins ``$RAY_ADDRESS``), ``auto`` joins
    the one running on this machine, ``host:port`` or ``ray://host:10001`` a remote one.
    Where Ray is already initialised in this process (the Python API inside a Ray job),
    that session is used as it is, its own runtime_env included."""
    ray = import_ray()
    owned = not ray.is_initialized()
    if owned:
        # a new local cluster takes these; joining an existing one refuses them
        local = {"include_dashboard": False} if address is None and not os.environ.get(
            "RAY_ADDRESS") else {}
        try:
            ray.init(address=address, runtime_env=runtime_env(config_dir, runs_dir, env_names),
                     log_to_driver=True, **local)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UsageError(f"cannot connect to Ray at {address or 'a new local cluster'}: "
                             f"{exc}".splitlines()[0][:300],
                             hint="start one (`ray start --head`), or pass --ray-address "
                             "host:6379 / ray://host:10001") from None
    executor = RayExecutor(ray, config_dir, ship_code=owned)
    try:
        yield executor.runner_factory
    finally:
        executor.batcher.close()
        if owned:
            ray.shutdown()
