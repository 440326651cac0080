"""``--executor ray``: cells run as Ray tasks on a cluster's workers; this process stays the
one driver.

What stays in the driver (the engine, unchanged): the plan and the resume index, claims,
every file of the run directory (records are written here, from the results the tasks
return), judges and their cache, progress, fail-fast on quota/auth, retries (one policy,
:mod:`eval_harness.retrying`: a retry is a new task), and whatever global limits the engine
applies (spend cap, concurrency). ``--concurrency`` is the number of tasks in flight; the
cluster's CPUs bound how many run at once (one CPU per task).

What a task does (:func:`_run_cells`, on a worker; one cell, or a few when the workers
are busy, :class:`_Batcher`): for each cell, build the condition's runner (cached per
config in the worker process), lay out a private scratch case folder with the cell's
``input.json`` and the dataset case's files (staged into the task: no shared filesystem
is needed), run the cell, and return the :class:`~eval_harness.runner.base.RunResult` plus
the files the runner wrote there (``stdout.log``, ``stderr.log``, ``workspace/``,
``output/``), which the driver writes into the real case folder before the record.

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

import atexit
import contextlib
import dataclasses
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval_harness.config.models import EvalConfig
from eval_harness.errors import UsageError
from eval_harness.runner.base import Runner, RunRequest, RunResult, build_runner

RAY_HINT = "pip install 'factorial-eval-harness[ray]' (on the driver and every worker)"
#: Ray reruns a task whose worker process or node died this many times
TASK_MAX_RETRIES = 3
#: seconds between checks for a cancel while waiting on a task
POLL_S = 1.0
#: cells grouped into one task at most, and how long a busy cluster waits to group them
MAX_BATCH = 8
LINGER_S = 0.004
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
    from eval_harness.store.atomic import write_bytes

    base = os.fspath(root)
    for rel, data in files.items():
        parts = rel.split("/")
        if rel.startswith("/") or ".." in parts:
            raise ValueError(f"staged path {rel!r} leaves its folder")
        target = os.path.join(base, *parts)
        if len(parts) > 1:
            os.makedirs(os.path.dirname(target), exist_ok=True)
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


def _worker_runner(key: str, boxed: list[Any]) -> tuple[Runner, EvalConfig]:
    """The worker process's runner for a config (built on its first cell)."""
    with _WORKER_LOCK:
        found = _WORKER_RUNNERS.get(key)
        if found is None:
            import ray

            config = boxed[0] if isinstance(boxed[0], EvalConfig) else ray.get(boxed[0])
            found = _WORKER_RUNNERS[key] = (build_runner(config), config)
        return found


_SCRATCH = threading.local()


def _scratch(name: str) -> Path:
    """An empty folder ``name`` in this worker thread's scratch folder. Reused, emptied
    file by file: removing a folder costs ~5 ms on ext4 here, as long as a trivial cell."""
    root = getattr(_SCRATCH, "root", None)
    if root is None:
        root = _SCRATCH.root = Path(tempfile.mkdtemp(prefix="eh-cell-"))
        atexit.register(shutil.rmtree, root, True)
    folder = root / name
    if folder.is_dir():
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    return folder


def _run_cell(key: str, boxed: list[Any], fields: dict[str, Any], config_dir: str,
              case_files: dict[str, bytes] | None) -> tuple[RunResult, dict[str, bytes]]:
    """One attempt of one cell, in this worker's private scratch case folder."""
    from eval_harness.store.writer import begin_case

    runner, config = _worker_runner(key, boxed)
    case_dir = _scratch("case")
    begin_case(case_dir, fields["input"])
    staged = None
    if case_files is not None:
        staged = _scratch("case-files")
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


def _run_cells(batch: list[tuple[Any, ...]]) -> list[tuple[RunResult, dict[str, bytes]]]:
    """The Ray task: the cells of one batch, one after the other (see :class:`_Batcher`)."""
    out = []
    for args in batch:
        try:
            out.append(_run_cell(*args))
        except Exception as exc:  # a bug in one cell is that cell's result, not the batch's
            out.append((RunResult(failure="error", reason=f"internal error on the Ray worker: "
                                  f"{type(exc).__name__}: {exc}"[:300]), {}))
    return out


# --- driver side ---------------------------------------------------------------------
class _Batcher:
    """Submits cells as Ray tasks, several to a task when the workers are all busy.

    A task costs the driver and the raylet about a millisecond; cells of a few
    milliseconds would spend as long on that as on the work. So when at least as many
    tasks are in flight as the cluster has CPUs (a new task would only queue), the cells
    submitted within :data:`LINGER_S` are grouped, up to :data:`MAX_BATCH`; otherwise a
    cell goes out at once, alone. A batch is rerun whole if its worker dies; a cancel
    cancels the batch."""

    def __init__(self, ray: Any, slots: int) -> None:
        self.ray = ray
        self.slots = max(1, slots)
        self.task = ray.remote(max_retries=TASK_MAX_RETRIES, num_cpus=1)(_run_cells)
        self._queue: queue.SimpleQueue[tuple[tuple[Any, ...], Future[Any]] | None] = (
            queue.SimpleQueue())
        self._lock = threading.Lock()
        self._refs: set[Any] = set()
        self._thread = threading.Thread(target=self._loop, name="ray-submit", daemon=True)
        self._thread.start()

    def submit(self, args: tuple[Any, ...]) -> Future[Any]:
        """Queue one cell; the future resolves to (RunResult, files) or a Ray error."""
        future: Future[Any] = Future()
        self._queue.put((args, future))
        return future

    def _gather(self, first: tuple[tuple[Any, ...], Future[Any]]
                ) -> list[tuple[tuple[Any, ...], Future[Any]]]:
        batch = [first]
        with self._lock:
            busy = len(self._refs) >= self.slots
        deadline = time.monotonic() + (LINGER_S if busy else 0.0)
        while len(batch) < (MAX_BATCH if busy else 1):
            try:
                item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if item is None:  # closing: let the loop see it
                self._queue.put(None)
                break
            batch.append(item)
        return batch

    def _loop(self) -> None:
        while (first := self._queue.get()) is not None:
            batch = self._gather(first)
            try:
                ref = self.task.remote([args for args, _ in batch])
            except Exception as exc:  # the cluster went away
                for _, future in batch:
                    future.set_exception(exc)
                continue
            with self._lock:
                self._refs.add(ref)
            ref.future().add_done_callback(
                lambda done, ref=ref, batch=batch: self._resolve(done, ref, batch))

    def _resolve(self, done: Future[Any], ref: Any,
                 batch: list[tuple[tuple[Any, ...], Future[Any]]]) -> None:
        with self._lock:
            self._refs.discard(ref)
        error = done.exception()
        for i, (_, future) in enumerate(batch):
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(done.result()[i])

    def cancel_all(self) -> None:
        """Cancel every task in flight (the worker stops the agent's processes)."""
        with self._lock:
            refs = list(self._refs)
        for ref in refs:
            with contextlib.suppress(Exception):  # already finished, or the cluster is gone
                self.ray.cancel(ref)

    def close(self) -> None:
        """Stop the submitting thread (after the engine is done with the batcher)."""
        self._queue.put(None)
        self._thread.join(timeout=5)


class RayCellRunner:
    """A :class:`~eval_harness.runner.base.Runner` whose ``run`` is a Ray task."""

    def __init__(self, config: EvalConfig, executor: RayExecutor) -> None:
        self.config = config
        self._ex = executor
        self._key = f"{id(config)}-{os.getpid()}"
        self._boxed = [executor.ray.put(config)]  # in a list: the task resolves it once
        self._local: Runner | None = None
        self._cancelled = threading.Event()

    def preflight(self, config_dir: Path) -> Any:
        """The local runner's check (e.g. the python runner imports its function)."""
        self._local = self._local or build_runner(self.config)
        check = getattr(self._local, "preflight", None)
        return check(config_dir) if callable(check) else None

    def run(self, request: RunRequest) -> RunResult:
        """Submit the cell, wait for it, write what it produced; never raise."""
        ray = self._ex.ray
        if self._cancelled.is_set():
            return RunResult(failure="error", reason="cancelled")
        sent = {name: getattr(request, name) for name in _SENT_FIELDS}
        future = self._ex.batcher.submit((self._key, self._boxed, sent,
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
        self.batcher = _Batcher(ray, int(ray.cluster_resources().get("CPU", 1)))

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
