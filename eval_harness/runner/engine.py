"""The execution engine: plan the cells, run them concurrently, keep every finished one.

API::

    summary = execute(exp, scorer, EngineOptions(runs_dir=Path("runs"), concurrency=4))

- ``concurrency`` worker threads pulling from one queue across all conditions (threads suit the work:
  each worker mostly waits on a subprocess or a socket; the GIL is released meanwhile).
- Fail fast on quota/auth: a cell whose call ends ``quota``/``auth`` gets one more try; when
  ``fatal_after`` (default 2) such failures have been seen in total, the engine stops
  launching, lets calls in flight finish (their ok results are kept), writes **no record**
  for the cells that hit quota/auth or were never started (so a rerun does them), and
  raises :class:`~eval_harness.errors.QuotaExhausted` (exit 3).
- Ctrl-C or SIGTERM (the CLI turns it into :class:`~eval_harness.errors.Terminated`):
  stop launching, TERM/KILL the subprocesses in flight, record nothing for them,
  mark the run directories, re-raise KeyboardInterrupt (exit 130). Finished cells stay.
- A scorer is a parameter (``None`` = no judges); a scorer exception makes the case
  ``errored`` with the reason, never a lost case and never a zero score.
- Cost controls (docs/cost.md), each a small object the engine owns so it stays global in
  the driver: ``options.cache`` wraps the API runners (:mod:`.cached`); one AIMD limiter
  per endpoint (:mod:`.limiter`); the spend cap (:class:`~.budget.SpendTracker`) stops
  launching at ``options.max_spend`` and raises BudgetExhausted (exit 3) after the cells in
  flight finished; per-cell token / cost limits error a cell (:func:`~.budget.check_cell_limits`).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_harness._util.clock import utc_timestamp
from eval_harness._util.file_modes import set_runs_mode
from eval_harness._util.retrying import CURRENT_STOP
from eval_harness.config.envvars import env_references
from eval_harness.config.models import EvalConfig
from eval_harness.errors import AgentCannotStart, BudgetExhausted, QuotaExhausted, Terminated
from eval_harness.judges.interface import Scorer
from eval_harness.matrix.builder import Condition
from eval_harness.matrix.experiment import Experiment
from eval_harness.runner.budget import (
    SpendTracker,
    cell_costs,
    cell_worst_case,
    check_cell_limits,
)
from eval_harness.runner.cached import with_cache
from eval_harness.runner.cell import Backoff, call_with_retries, finish_cell_data
from eval_harness.runner.contract import FATAL_FAILURES, Runner, RunRequest
from eval_harness.runner.limiter import Limiters, with_limiter
from eval_harness.runner.plan import Cell, Plan, make_plan
from eval_harness.runner.progress import Progress
from eval_harness.runner.shard import Shard
from eval_harness.store.case_writer import begin_case
from eval_harness.store.claims import claim_cell, finished_after
from eval_harness.store.index import Entry, ResumeIndex
from eval_harness.store.rundirs import RunDir, finish_run_dir, open_run_dirs

#: engine abort -> run.json ``aborted_reason``
_ABORT_REASONS = {"interrupt": "interrupted", "terminated": "terminated", "quota": "quota",
                  "error": "error", "budget": "budget", "start": "error"}
#: a cell's failure reason when its program could not be started (runner/process.py)
_START_ERROR = "cannot start: "
#: seconds Ctrl-C waits for workers to wind down after their processes were stopped
INTERRUPT_JOIN_S = 10.0


@dataclass(frozen=True)
class EngineOptions:
    """Runtime knobs (none of them enters a condition id or a config digest)."""

    runs_dir: Path = Path("runs")
    concurrency: int = 4
    force: bool = False
    retry_errors: bool = False
    shard: Shard | None = None
    order: str = "random"  # random | grid
    seed: int = 0
    verbose: bool = False
    progress: str = "auto"  # auto | rich | plain | off
    fatal_after: int = 2  # quota/auth failures seen before aborting
    #: cells that could not start the agent, all with the same error and none started,
    #: before the run stops (a program that is not executable, a missing interpreter)
    start_fail_after: int = 3
    backoff: Backoff = field(default_factory=Backoff)
    cache: Any = None  # eval_harness.cache.store.CallCache, or None: no model-call cache
    max_spend: float | None = None  # USD; None: execution.max_spend, else no cap
    adaptive: bool = True  # AIMD concurrency per endpoint on 429s
    trace: bool = True  # store each case's trace (--no-trace: judges still see it)
    executor: str = "local"  # where a cell runs: local (threads here) | ray
    ray_address: str | None = None  # --executor ray: None = a new local cluster


@dataclass
class EngineSummary:
    """What happened."""

    eval_dir: Path
    plan: Plan
    ok: int = 0
    errored: int = 0
    not_run: int = 0  # aborted or interrupted before a record was written
    spend_usd: float = 0.0
    run_dirs: list[Path] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)  # run_id -> run.json status
    aborted: str | None = None  # None | quota | budget | interrupt | terminated | error
    saved_usd: float = 0.0  # cost of cache hits (not spent)
    budget_line: str | None = None  # the spend cap's one-line summary, when it stopped the run
    reasons: Counter[str] = field(default_factory=Counter)  # errored cells: reason -> count


@dataclass(frozen=True)
class _Outcome:
    # the record.json fields as written (no model: built per cell only to be read back);
    # None: nothing written (not started, cancelled, quota)
    record: dict[str, Any] | None


def build_runner(config: EvalConfig) -> Runner:
    """:func:`eval_harness.runner.runner_types.build_runner`, imported on first use (the builtin
    runners and their HTTP stack stay unimported for planning)."""
    from eval_harness.runner import runner_types

    return runner_types.build_runner(config)


class Engine:
    """Runs one plan; see the module doc."""

    def __init__(self, exp: Experiment, scorer: Scorer | None, options: EngineOptions,
                 runner_factory: Callable[[EvalConfig], Runner] = build_runner) -> None:
        self.exp = exp
        self.scorer = scorer
        set_runs_mode(exp.loaded.config.execution.runs_mode)  # modes of what the run writes
        self.opt = options
        self.eval_dir = options.runs_dir / exp.name
        self._factory = runner_factory
        self._runners: dict[int, Runner] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._fatal = 0
        self._fatal_reason: str | None = None
        self._started = False  # some cell's program started (or no cell has finished)
        self._start_errors: Counter[str] = Counter()
        self.aborted: str | None = None
        self._scanned_at = float("inf")  # set by plan(): records after it are not ours
        raw_refs = env_references(exp.loaded.raw)
        self._env_names = sorted(raw_refs)
        self.secrets = tuple(v for k in sorted(raw_refs) if (v := os.environ.get(k)))
        self.run_dirs: dict[tuple[str, int], RunDir] = {}
        self._queue: deque[Cell] = deque()
        self._crash: BaseException | None = None
        self._case_info: dict[int, tuple[str, dict[str, Any]]] = {}  # id(case) -> hash, tags
        self._by_condition: dict[str, Runner] = {}  # lock-free fast path of runner_for
        self._cond_info: dict[str, tuple[Any, Any, str]] = {}  # model, subagent, digest
        self._cases_dirs: dict[tuple[str, int], Path] = {}
        cap = options.max_spend if options.max_spend is not None else \
            exp.loaded.config.execution.max_spend
        self.spend = SpendTracker(cap)
        self.limiters = Limiters(options.concurrency) if options.adaptive else None

    def runner_for(self, condition_id: str) -> Runner:
        """One runner per distinct effective config (variants may differ)."""
        runner = self._by_condition.get(condition_id)
        if runner is not None:
            return runner
        cfg = self.exp.effective[condition_id]
        with self._lock:
            runner = self._runners.get(id(cfg))
            if runner is None:
                if cfg.execution.steps:
                    from eval_harness.runner.steps import StepsRunner

                    runner = StepsRunner(cfg, self._factory)
                else:
                    runner = self._factory(cfg)
                hooks = cfg.hooks
                if hooks is not None and (hooks.before_each or hooks.after_each
                                          or hooks.before_scoring):
                    from eval_harness.runner.hooks import HookedRunner

                    runner = HookedRunner(runner, cfg, self.exp.loaded.path, self.eval_dir,
                                          self.exp.name)
                runner = self._runners[id(cfg)] = with_cache(
                    with_limiter(runner, self.limiters, self._stop), self.opt.cache)
            self._by_condition[condition_id] = runner
        return runner

    def plan(self) -> Plan:
        """Scan the runs directory and plan this shard's cells."""
        self._scanned_at = time.time()  # a record written after this is another process's
        self.index = ResumeIndex.scan(self.eval_dir)
        return make_plan(self.exp.conditions, self.exp.cases, self.exp.replications,
                         self.exp.digests, self.index, shard=self.opt.shard,
                         order=self.opt.order, seed=self.opt.seed, force=self.opt.force,
                         retry_errors=self.opt.retry_errors, judge_digests=self._judge_digests())

    def _judge_digests(self) -> dict[str, dict[str, str]] | None:
        """{condition: {judge: digest}} from the scorer (None: it cannot tell)."""
        digests = getattr(self.scorer, "judge_digests", None)
        if not callable(digests):
            return None
        return {c.condition_id: digests(c.condition_id) for c in self.exp.conditions}

    def _request(self, cell: Cell, run: RunDir) -> RunRequest:
        cond, case = cell.condition, cell.case
        cid = cond.condition_id
        eff = self.exp.effective[cid]
        model, subagent, _ = self._condition_info(cond)
        key = (cid, cell.replication)
        cases_dir = self._cases_dirs.get(key)
        if cases_dir is None:  # one pathlib join per cell instead of two
            cases_dir = self._cases_dirs[key] = run.case_dir("_").parent
        overrides = cond.input_overrides
        return RunRequest(
            case_id=case.case_id, input={**case.input, **overrides} if overrides
            else dict(case.input), condition_id=cid, levels=cond.levels,
            replication=cell.replication, model=model,
            # runner.effort (agent-eval-harness): the effort of conditions without a factor
            effort=cond.effort if cond.effort is not None or eff.runner is None
            else eff.runner.effort,
            subagent_model=subagent, config=eff, config_dir=self.exp.loaded.base_dir,
            case_dir=cases_dir / case.case_id, case_files=case.directory,
            verbose=self.opt.verbose, secrets=self.secrets,
        )

    def _condition_info(self, cond: Condition) -> tuple[Any, Any, str]:
        """(model, subagent model, config digest) of a condition, worked out once."""
        cid = cond.condition_id
        info = self._cond_info.get(cid)
        if info is None:
            eff = self.exp.effective[cid]
            info = self._cond_info[cid] = (
                cond.model if cond.model is not None else eff.models.skill,
                cond.subagent_model if cond.subagent_model is not None else eff.models.subagent,
                self.exp.digests[cid])
        return info

    def _note_fatal(self, reason: str) -> bool:
        """Count a quota/auth failure; True when the engine must abort."""
        with self._lock:
            self._fatal += 1
            self._fatal_reason = self._fatal_reason or reason
            if self._fatal >= self.opt.fatal_after and self.aborted is None:
                self.aborted = "quota"
                self._stop.set()
            return self.aborted is not None

    def run_cell(self, cell: Cell) -> _Outcome:
        """Worker: one cell from start to record (or to nothing, when stopping)."""
        if self._stop.is_set():
            return _Outcome(None)
        run = self.run_dirs[(cell.condition.condition_id, cell.replication)]
        request = self._request(cell, run)
        # claimed for the whole cell: another orchestrator on this runs dir skips it
        with claim_cell(request.case_dir) as mine:
            if not mine or self._done_elsewhere(cell, request):
                return _Outcome(None)
            begin_case(request.case_dir, request.input)
            try:
                return self._call_and_record(cell, run, request)
            except Exception as exc:  # e.g. a template error in one case: a result
                from eval_harness.runner.contract import RunResult

                result = RunResult(failure="error", reason=f"internal error: "
                                   f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"[:300])
                return _Outcome(self._record(cell, run, request, result, 0))

    def _planned(self, cell: Cell) -> Entry | None:
        return self.index.get(cell.condition.condition_id, cell.replication, cell.case.case_id)

    def _done_elsewhere(self, cell: Cell, request: RunRequest) -> bool:
        """True when another process wrote this cell's record after this plan's scan (its
        file time, from this machine's clock, is later than the scan's start)."""
        try:
            written = os.stat(os.path.join(request.case_dir, "record.json")).st_mtime
        except OSError:
            return False
        return written >= self._scanned_at

    def _record(self, cell: Cell, run: RunDir, request: RunRequest, result: Any,
                attempts: int) -> dict[str, Any]:
        case_hash, tags = self._case_hash_tags(cell)
        return finish_cell_data(
            request=request, result=result, attempts=attempts, scorer=self.scorer,
            expected=cell.case.expected, annotations=cell.case.annotations,
            case_hash=case_hash, tags=tags,
            digest=self._condition_info(cell.condition)[2], run_id=run.run_id,
            extra=self._extra(cell), store_trace=self.opt.trace,
        )

    def _extra(self, cell: Cell) -> dict[str, Any] | None:
        extra: dict[str, Any] = {"shard": str(self.opt.shard)} if self.opt.shard else {}
        planned = self._planned(cell)
        if planned is not None:  # a rerun: its record must count over the old one
            when, note = finished_after(planned.finished_at, utc_timestamp())
            if note:
                extra.update(finished_at=when, clock_note=note)
        return extra or None

    def _case_hash_tags(self, cell: Cell) -> tuple[str, dict[str, Any]]:
        # properties that hash the case's JSON / filter its annotations: once per case
        key = id(cell.case)
        value = self._case_info.get(key)
        if value is None:
            value = self._case_info[key] = (cell.case.case_hash, cell.case.tags)
        return value

    def _call_and_record(self, cell: Cell, run: RunDir, request: RunRequest) -> _Outcome:
        runner = self.runner_for(cell.condition.condition_id)
        retries = request.config.execution.retries
        result, attempts = call_with_retries(runner, request, retries, self.opt.backoff, self._stop)
        check_cell_limits(result, request.config.execution)
        while result.failure in FATAL_FAILURES:
            if self._note_fatal(result.reason or result.failure):
                return _Outcome(None)
            more, n = call_with_retries(runner, request, retries, self.opt.backoff, self._stop)
            result, attempts = more, attempts + n
        if self._stop.is_set() and (result.failure == "transient"
                                    or self.aborted in ("interrupt", "terminated")
                                    or result.reason == "cancelled"):
            return _Outcome(None)  # cut short by the abort: leave it for the rerun
        return _Outcome(self._record(cell, run, request, result, attempts))

    def _preflight(self, plan: Plan) -> None:
        """Build every runner the plan needs before anything runs; a runner with a
        ``preflight(config_dir)`` hook checks its setup there (the python runner imports its
        function), so a broken setup is a ConfigError (exit 2) with no run dir written."""
        cids = {c.condition.condition_id for c in plan.todo}
        runners = {id(r): r for r in map(self.runner_for, cids)}  # shared configs: once
        for runner in runners.values():
            check = getattr(runner, "preflight", None)
            if callable(check):
                check(self.exp.loaded.base_dir)

    def _cancel(self) -> None:
        for runner in list(self._runners.values()):
            runner.cancel_all()

    def _worker(self, summary: EngineSummary, progress: Progress) -> None:
        """Pull cells until the queue is empty or the engine stops; account under the lock."""
        CURRENT_STOP.set(self._stop)  # judge retries in this thread stop on the abort too
        while not self._stop.is_set() and self.aborted != "budget":
            with self._lock:
                cell = self._queue.popleft() if self._queue else None
            if cell is None:
                return
            held = self.spend.launch(self._stop, self._worst_case(cell))
            if held is None:  # no room under the cap for this cell's worst case
                with self._lock:
                    self._queue.appendleft(cell)
                    if not self._stop.is_set():
                        self.aborted = self.aborted or "budget"
                return
            try:
                out = self.run_cell(cell)
            except BaseException as exc:  # a bug or a full disk: stop everything, re-raise
                self.spend.cancel(held)
                with self._lock:
                    self._crash = self._crash or exc
                self._stop.set()
                return
            rec = out.record
            if rec is None:
                self.spend.cancel(held)
                continue
            paid, saved = cell_costs(rec)  # runner + judges; cache hits are saved, not spent
            self.spend.settle(paid, saved, held)
            status, cid, rep = rec["status"], rec["condition_id"], rec["replication"]
            entry = Entry(status, rec["config_digest"], rec["finished_at"] or "",
                          self.run_dirs[(cid, rep)].path, rec.get("case_hash") or "",
                          rec.get("judge_digests"))
            with self._lock:
                self._note_start(str(rec.get("reason") or "") if status == "errored" else "")
                summary.ok += status == "ok"
                summary.errored += status == "errored"
                if status == "errored":
                    summary.reasons[" ".join(str(rec.get("reason") or "unknown").split())[:200]] += 1
                summary.spend_usd += paid or 0.0
                self.index.add(cid, rep, rec["case_id"], entry)
                progress.advance(errored=status == "errored", cost=paid)

    def _note_start(self, reason: str) -> None:
        """(Under the lock.) Count a cell whose program could not start; stop the run when
        the first ``start_fail_after`` cells all failed to start with the same error."""
        if not reason.startswith(_START_ERROR):
            self._started = True
            return
        self._start_errors[reason] += 1
        if (not self._started and self._start_errors[reason] >= self.opt.start_fail_after
                and self.aborted is None):
            self.aborted = "start"
            self._stop.set()

    def _start_failure(self) -> AgentCannotStart:
        reason, count = self._start_errors.most_common(1)[0]
        detail = reason[len(_START_ERROR):]
        program = re.search(r": '([^']+)'$", detail)
        where = program.group(1) if program else "the program in runner.command"
        if "Permission denied" in detail:
            hint = f"make it executable: chmod +x {where} (or run it through its interpreter, " \
                   "e.g. python3 agent.py)"
        elif "No such file" in detail:
            hint = f"{where} does not exist: check runner.command (a relative path is " \
                   "resolved against the config's folder)"
        else:
            hint = "fix runner.command, then rerun the same command (the errored cells rerun " \
                   "with --retry-errors)"
        return AgentCannotStart(f"the agent could not be started in the first {count} cell(s), "
                                f"each with the same error ({detail}); stopped before the "
                                "other cells", hint=hint)

    def _worst_case(self, cell: Cell) -> float | None:
        """The most ``cell`` can add to the spend (runner/budget.py), None when unknown
        or when there is no cap."""
        if self.spend.cap is None:
            return None
        try:
            request = self._request(cell, self.run_dirs[(cell.condition.condition_id,
                                                         cell.replication)])
            case_bytes = len(json.dumps([request.input, cell.case.expected],
                                        default=str).encode("utf-8"))
            return cell_worst_case(self.runner_for(cell.condition.condition_id), request,
                                   case_bytes)
        except Exception:  # e.g. a template error: the cell will say so; run it alone
            return None

    def execute(self) -> EngineSummary:
        """Plan and run; raise QuotaExhausted / KeyboardInterrupt after cleaning up.

        Where a cell runs is the one seam: ``executor: ray`` swaps the runner factory for
        one whose runners send each attempt to a Ray worker (runner/ray_executor.py);
        everything else here stays as it is, in this one driver process.
        """
        if self.opt.executor != "ray":
            return self._execute()
        from eval_harness.runner.ray_executor import ray_executor, refuse_unsupported

        refuse_unsupported(self.exp.effective.values())
        local = self._factory
        with ray_executor(self.opt.ray_address, self.exp.loaded.base_dir, self.opt.runs_dir,
                          self._env_names) as factory:
            self._factory = factory
            try:
                return self._execute()
            finally:
                self._factory = local

    def _execute(self) -> EngineSummary:
        """:meth:`execute` with this engine's runner factory.

        Workers pull from one queue and do their own bookkeeping; the main thread only
        waits (in short joins, so Ctrl-C is seen at once). Handing every finished cell to
        the main thread instead costs a GIL hand-off per cell, ~5 ms with busy workers.
        """
        plan = self.plan()
        summary = EngineSummary(self.eval_dir, plan)
        if not plan.todo:
            return summary
        self._preflight(plan)
        from eval_harness.runner.hooks import run_global

        run_global("before_all", self.exp, self.eval_dir)  # fails: exit 2, nothing run
        wanted = [(c.condition, c.replication) for c in plan.todo]
        self.run_dirs = open_run_dirs(
            self.eval_dir, self.exp.name, wanted, self.index.run_dirs, self.exp.digests,
            self.exp.replications, str(self.opt.shard) if self.opt.shard else None)
        progress = Progress(len(plan.todo), mode=self.opt.progress,
                            status=self.limiters.describe if self.limiters else None)
        self._queue = deque(plan.todo)
        workers = [threading.Thread(target=self._worker, args=(summary, progress),
                                    name=f"cell-{i}", daemon=True)
                   for i in range(max(1, min(self.opt.concurrency, len(plan.todo))))]
        for w in workers:
            w.start()
        try:
            for w in workers:
                while w.is_alive():
                    w.join(0.25)
        except BaseException as exc:  # Ctrl-C / SIGTERM: stop, kill what runs, keep what
            # finished, re-raise
            self.aborted = "terminated" if isinstance(exc, Terminated) else "interrupt"
            self._stop.set()
            self._cancel()
            # bounded: a worker stuck in user Python code (a judge, a python-runner call)
            # cannot be stopped; it is a daemon thread and is left behind
            deadline = time.monotonic() + INTERRUPT_JOIN_S
            for w in workers:
                w.join(max(0.0, deadline - time.monotonic()))
            summary.not_run = len(plan.todo) - summary.ok - summary.errored
            self._finish(summary)
            progress.close()
            raise
        progress.close()
        summary.not_run = len(plan.todo) - summary.ok - summary.errored
        if self._crash is not None:
            self.aborted = self.aborted or "error"
            self._finish(summary)
            raise self._crash
        self._finish(summary)
        summary.saved_usd = self.spend.saved
        if self.aborted == "budget":
            summary.budget_line = self.spend.left_line(summary.not_run)
            raise BudgetExhausted(summary.budget_line,
                                  hint="rerun the same command to resume (each run gets the "
                                       "cap afresh), or raise --max-spend")
        if self.aborted == "start":
            raise self._start_failure()
        if self.aborted == "quota":
            raise QuotaExhausted(
                f"stopped after repeated quota/auth failures ({self._fatal_reason}); "
                f"{summary.ok + summary.errored} cells finished and kept, {summary.not_run} "
                "not run", hint="fix the key or quota, then rerun the same command to resume")
        return summary

    def _finish(self, summary: EngineSummary) -> None:
        from eval_harness.runner.hooks import run_global

        run_global("after_all", self.exp, self.eval_dir)  # never fails the run
        case_ids = [c.case_id for c in self.exp.cases]
        shard = str(self.opt.shard) if self.opt.shard else None
        for run in self.run_dirs.values():
            status = finish_run_dir(run, self.exp.name, case_ids,
                                    aborted=self.aborted is not None, shard=shard,
                                    reason=_ABORT_REASONS.get(self.aborted or ""))
            summary.statuses[run.run_id] = status
            summary.run_dirs.append(run.path)
        summary.aborted = self.aborted


def execute(exp: Experiment, scorer: Scorer | None, options: EngineOptions,
            runner_factory: Callable[[EvalConfig], Runner] = build_runner) -> EngineSummary:
    """Run the experiment's cells (resumable); see :class:`Engine`."""
    return Engine(exp, scorer, options, runner_factory).execute()


def describe(summary: EngineSummary) -> dict[str, Any]:
    """A JSON-able one-line summary of a run."""
    p = summary.plan
    return {"eval_dir": str(summary.eval_dir), "cells": p.total, "ran": len(p.todo),
            "skipped_complete": p.skipped_complete, "skipped_errored": p.skipped_errored,
            "stale_rerun": p.stale, "ok": summary.ok, "errored": summary.errored,
            "not_run": summary.not_run, "spend_usd": round(summary.spend_usd, 6),
            "aborted": summary.aborted}
