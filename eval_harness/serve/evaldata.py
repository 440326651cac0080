"""One eval's analysis for the dashboard, computed in memory and cached per change token.

The same analysis as ``--analyze-only`` (``app.analyze``, with the config recorded beside
the runs: its pass mark and gate judges, its matrix, comparisons, thresholds), nothing
written. Computation runs on one background thread; a request
waits up to ``WAIT_S`` for it and otherwise gets the previous result (marked stale) or
"analysing", and the page reloads itself when the token changes. At most ``MAX_EVALS``
evals are held (least recently used dropped), so memory is bounded by the largest evals
browsed, not by the number served.
"""

from __future__ import annotations

import functools
import os
import queue
import threading
import time
import traceback
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_harness._util.atomic_files import read_json
from eval_harness.app.options import AnalysisOptions
from eval_harness.serve.catalog import EvalEntry, change_token

if TYPE_CHECKING:  # pandas loads with the first analysis, not at start-up
    import pandas as pd

    from eval_harness.analysis.compare.verdicts import VerdictRule

MAX_EVALS = 2
WAIT_S = 1.5


@dataclass(frozen=True)
class RunMeta:
    """One run directory as the dashboard names it."""

    run_id: str
    path: Path
    layout: str
    condition_id: str
    replication: int
    levels: dict[str, Any]
    status: str
    started_at: str | None
    finished_at: str | None


@dataclass
class EvalData:
    """Everything the eval, compare, trends and case pages read."""

    token: str
    entry: EvalEntry
    frame: pd.DataFrame
    samples: pd.DataFrame  #: one row per (run, case): verdict rule inputs
    cases: pd.DataFrame  #: one row per (condition, case): verdict, pass rate, means
    anova: dict[str, Any]
    leaderboard: dict[str, Any] | None
    report: dict[str, Any]
    runs: dict[str, RunMeta]  #: run_id -> run
    expected: dict[str, Any]  #: case_id -> expected (from the recorded config's dataset)
    rule: VerdictRule  #: the pass rule of the analysis (pass mark and gate judges)
    computed_s: float
    verdicts: pd.DataFrame = field(init=False)  #: case_id x condition_id -> verdict
    case_order: list[str] = field(init=False)
    charts: dict[str, str] = field(default_factory=dict)  #: rendered SVG, by chart name
    judge_grids: dict[str, pd.DataFrame] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  #: per-page results (compare pairs)

    def __post_init__(self) -> None:
        cids = [c["condition_id"] for c in self.report["conditions"]]
        grid = self.cases.pivot(index="case_id", columns="condition_id", values="verdict")
        self.verdicts = grid.reindex(columns=[c for c in cids if c in grid.columns])
        self.case_order = sorted(map(str, self.verdicts.index))

    @property
    def pass_mark(self) -> float:
        """The pass mark of :attr:`rule`."""
        return float(self.rule.pass_mark)

    @property
    def condition_ids(self) -> list[str]:
        """Conditions in matrix order."""
        return [str(c) for c in self.verdicts.columns]

    def judge_grid(self, judge: str) -> pd.DataFrame:
        """case_id x condition_id -> mean value of ``judge`` over replications."""
        if judge not in self.judge_grids:
            import pandas as pd

            rows = self.frame[(self.frame["judge"].astype(str) == judge) & ~self.frame["errored"]]
            values = pd.to_numeric(rows["value"].astype(object).map(
                lambda v: float(v) if isinstance(v, (int, float)) else None), errors="coerce")
            grid = values.groupby([rows["case_id"].astype(str), rows["condition_id"].astype(str)]
                                  ).mean().unstack()
            self.judge_grids[judge] = grid.reindex(columns=self.condition_ids)
        return self.judge_grids[judge]


@dataclass
class Failed:
    """An eval whose analysis could not be computed (shown as an error, never as zeros)."""

    token: str
    message: str


_META: dict[str, tuple[str, dict[str, RunMeta]]] = {}
_META_LOCK = threading.Lock()


def run_meta_cached(entry: EvalEntry, token: str) -> dict[str, RunMeta]:
    """:func:`run_meta`, read again only when the eval's change token moved (the evals
    page: O(evals) work on a repeat load, not a ``run.json`` read per run)."""
    key = os.fspath(entry.path)
    with _META_LOCK:
        got = _META.get(key)
    if got is not None and got[0] == token:
        return got[1]
    meta = run_meta(entry)
    with _META_LOCK:
        _META[key] = (token, meta)
    return meta


def run_meta(entry: EvalEntry) -> dict[str, RunMeta]:
    """run_id -> each run's recorded condition, replication, status and times."""
    from eval_harness.analysis.loading.runfiles import read_json_object

    out: dict[str, RunMeta] = {}
    for run in entry.runs:
        path = Path(run.path)
        if run.layout == "native":
            rec = read_json(path / "run.json") or {}
            cond = read_json(path / "condition.json") or {}
        else:
            rec = {}
            try:
                cond = read_json_object(str(path / "condition.json"))
            except ValueError:
                cond = {}
        run_id = str(rec.get("run_id") or path.name)
        out[run_id] = RunMeta(
            run_id=run_id, path=path, layout=run.layout,
            condition_id=str(rec.get("condition_id") or cond.get("condition_id") or ""),
            replication=int(rec.get("replication") or 1),
            levels=dict(rec.get("levels") or cond.get("levels") or {}),
            status=str(rec.get("status") or ("complete" if run.layout != "native" else "unknown")),
            started_at=rec.get("started_at"), finished_at=rec.get("finished_at"))
    return out


def _expected(loaded: Any) -> dict[str, Any]:
    """case_id -> expected, when the recorded config's dataset is still where it was."""
    from eval_harness.config.dataset import load_dataset

    dataset = getattr(getattr(loaded, "config", None), "dataset", None)
    source = (read_json(loaded.path) or {}).get("source") if loaded is not None else None
    if dataset is None or not source or not getattr(dataset, "path", None):
        return {}
    path = Path(source).parent / str(dataset.path)
    try:
        return {c.case_id: c.expected for c in load_dataset(path)}
    except Exception:  # the dataset moved or changed: expected is simply not shown
        return {}


def compute(entry: EvalEntry, token: str,
            options: AnalysisOptions | None = None) -> EvalData:
    """The analysis of one eval: ``app.analyze`` with the config recorded beside the runs,
    in memory (``write=False``), so the pages show what ``--analyze-only`` reports.
    ``options``: the dashboard's analysis options (``serve --aeh-errors``)."""
    from eval_harness.app.analyze import analyze, recorded_config

    start = time.perf_counter()
    paths = [Path(entry.path)]
    loaded = recorded_config(paths)
    out = analyze(paths, options or AnalysisOptions(), loaded, write=False, say=_quiet)
    assert out.tables is not None and out.report is not None  # never no_report here
    samples, cases = out.tables
    return EvalData(token=token, entry=entry, frame=out.frame, samples=samples, cases=cases,
                    anova=out.anova, leaderboard=out.leaderboard, report=out.report,
                    runs=run_meta(entry), expected=_expected(loaded), rule=out.rule,
                    computed_s=time.perf_counter() - start)


def _quiet(line: str) -> None:
    """The analysis' notes: not printed by the dashboard (its pages show the results)."""


@dataclass
class Lookup:
    """What a page gets: the data (possibly of an older token), and whether it is current."""

    data: EvalData | None
    current: bool
    error: str | None = None


class EvalCache:
    """Per-eval analyses keyed by change token; one computation at a time."""

    def __init__(self, max_evals: int = MAX_EVALS, wait_s: float = WAIT_S,
                 options: AnalysisOptions | None = None) -> None:
        self.max_evals, self.wait_s = max_evals, wait_s
        self.options = options or AnalysisOptions()  #: how every eval is analysed
        self._lock = threading.Lock()
        self._done: OrderedDict[str, EvalData | Failed] = OrderedDict()
        self._pending: dict[str, tuple[str, Future[EvalData | Failed]]] = {}
        # one daemon worker (not a ThreadPoolExecutor, whose threads are joined at exit):
        # Ctrl-C stops the server at once even while a large eval is being analysed
        self._queue: queue.SimpleQueue[tuple[Future[Any], EvalEntry, str] | None] = (
            queue.SimpleQueue())
        threading.Thread(target=self._loop, name="eh-serve-analysis", daemon=True).start()

    def _loop(self) -> None:
        while (job := self._queue.get()) is not None:
            fut, entry, token = job
            if fut.set_running_or_notify_cancel():
                fut.set_result(self._run(entry, token))

    def _submit(self, entry: EvalEntry, token: str) -> Future[EvalData | Failed]:
        fut: Future[EvalData | Failed] = Future()
        self._queue.put((fut, entry, token))
        return fut

    def _run(self, entry: EvalEntry, token: str) -> EvalData | Failed:
        try:
            return compute(entry, token, self.options)
        except Exception as exc:  # shown on the page; the server keeps serving
            message = getattr(exc, "one_line", None)
            text = message() if callable(message) else f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
            return Failed(token, text)

    def _store(self, key: str, result: EvalData | Failed) -> None:
        self._done[key] = result
        self._done.move_to_end(key)
        while len(self._done) > self.max_evals:
            self._done.popitem(last=False)

    def lookup(self, entry: EvalEntry, wait_s: float | None = None) -> Lookup:
        """The analysis of ``entry`` at its current token, waiting up to ``wait_s``
        (default: the cache's)."""
        wait_s = self.wait_s if wait_s is None else wait_s
        token = change_token(entry)
        with self._lock:
            have = self._done.get(entry.key)
            if have is not None and have.token == token:
                self._done.move_to_end(entry.key)
                return _as_lookup(have, True)
            pending = self._pending.get(entry.key)
            if pending is None or pending[0] != token:
                fut = self._submit(entry, token)
                self._pending[entry.key] = (token, fut)
                fut.add_done_callback(functools.partial(self._finish, entry.key, token))
            else:
                fut = pending[1]
        try:
            return _as_lookup(fut.result(timeout=wait_s), True)
        except FutureTimeout:
            return _as_lookup(have, False) if have is not None else Lookup(None, False)

    def _finish(self, key: str, token: str, fut: Future[EvalData | Failed]) -> None:
        with self._lock:
            if self._pending.get(key, ("", None))[0] == token:
                del self._pending[key]
            if not fut.cancelled():
                self._store(key, fut.result())

    def cached(self, key: str) -> EvalData | None:
        """The last analysis of ``key``, whatever its token (None when none)."""
        with self._lock:
            got = self._done.get(key)
        return got if isinstance(got, EvalData) else None

    def close(self) -> None:
        """Stop the worker after the analysis in progress (queued ones are cancelled)."""
        with self._lock:
            for _, fut in self._pending.values():
                fut.cancel()
        self._queue.put(None)


def _as_lookup(result: EvalData | Failed, current: bool) -> Lookup:
    if isinstance(result, Failed):
        return Lookup(None, current, result.message)
    return Lookup(result, current)
