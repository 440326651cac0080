"""``run``: every pending cell of an eval's matrix (resumable), no analysis.

Prepare the experiment (config, cases, conditions) -> pre-flight (MLflow installed, judge
models answer) -> the scorer -> the engine (with the model-call cache and the spend cap)
-> rescore records whose judges changed -> record the config beside the runs. Progress
lines (``[eval] ...``) go to stderr, as the CLI prints them.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_harness.app.options import RunOptions, effective_concurrency
from eval_harness.errors import UsageError

if TYPE_CHECKING:  # the engine (and its HTTP stack) is imported only to run
    from eval_harness.cache.store import CallCache
    from eval_harness.matrix.experiment import Experiment
    from eval_harness.runner.engine import EngineOptions, EngineSummary


@dataclass(frozen=True)
class RunOutcome:
    """What one :func:`run` did."""

    exp: Experiment  #: the prepared experiment (its config, conditions, cases)
    summary: EngineSummary  #: the engine's counts and reasons
    info: dict[str, Any]  #: the one-line description's numbers (cells, ran, ok, ...)

    @property
    def eval_dir(self) -> Path:
        """runs/<eval>/."""
        return Path(self.summary.eval_dir)


def engine_options(options: RunOptions) -> EngineOptions:
    """The engine's options (checked: exit 2 on a bad combination)."""
    from eval_harness.runner.engine import EngineOptions
    from eval_harness.runner.shard import parse_shard

    if options.concurrency is not None and options.concurrency < 1:
        raise UsageError("--concurrency must be >= 1", hint="e.g. --concurrency 4")
    if options.force and options.retry_errors:
        raise UsageError("--force and --retry-errors exclude each other",
                         hint="--force reruns everything; --retry-errors only errored cells")
    return EngineOptions(
        runs_dir=Path(options.runs_dir), concurrency=options.concurrency or 4,
        force=options.force, retry_errors=options.retry_errors,
        shard=parse_shard(options.shard), order=options.order, seed=options.seed,
        verbose=options.verbose, progress="off" if options.quiet else "auto",
        trace=not options.no_trace,
    )


def open_cache(options: Any, exp: Any) -> CallCache | None:
    """The model-call cache a command uses (None: disabled); exit 2 when it cannot be
    opened. ``options``: anything with ``cache_dir``, ``no_cache`` and ``cache_refresh``."""
    from eval_harness.cache.settings import resolve

    no_cache = bool(getattr(options, "no_cache", False))
    refresh = bool(getattr(options, "cache_refresh", False))
    if no_cache and refresh:
        raise UsageError("--no-cache and --cache-refresh exclude each other",
                         hint="--cache-refresh still writes the cache; --no-cache does not")
    settings = resolve(flag_dir=getattr(options, "cache_dir", None), no_cache=no_cache,
                       refresh=refresh, block=exp.loaded.config.cache,
                       base_dir=exp.loaded.base_dir)
    try:
        return settings.open()
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot open the model-call cache at {settings.directory}: {exc}",
                         hint="pass --cache-dir DIR (writable) or --no-cache") from None


def checked_max_spend(value: float | None) -> float | None:
    """``--max-spend`` checked (> 0)."""
    if value is not None and not value > 0:
        raise UsageError("--max-spend must be a positive amount of USD", hint="--max-spend 5")
    return value


def run(options: RunOptions) -> RunOutcome:
    """Run every pending cell of the matrix (no analysis); the one-line description of
    what ran is printed on stderr."""
    from eval_harness.matrix.experiment import prepare
    from eval_harness.runner.engine import describe, execute

    engine = engine_options(options)
    exp = prepare(options.config, cases=options.cases, limit=options.limit,
                  overrides=options.config_overrides(),
                  input_overrides=options.input_overrides(),
                  condition_specs=options.condition)
    engine = dataclasses.replace(
        engine, concurrency=effective_concurrency(options.concurrency, exp.loaded.config))
    from eval_harness._util.file_modes import set_runs_mode
    from eval_harness.store.writable import require_writable

    set_runs_mode(exp.loaded.config.execution.runs_mode)  # before the first file we create

    # before anything writes there (the verdict cache, eval_config.json, run dirs), also
    # when nothing is left to do and under --force: one line, exit 2
    require_writable(Path(options.runs_dir) / exp.name, what="runs directory",
                     hint="pass --runs-dir DIR (a writable folder), or make it writable; "
                          "--analyze-only DIR reads a read-only runs directory")
    if exp.loaded.config.mlflow is not None:
        from eval_harness.reports.mlflow_log import require_mlflow

        require_mlflow()  # before any cell runs: exit 2 with the install hint
    if not options.no_judge_check:
        from eval_harness.judges.preflight import check_judge_models

        check_judge_models(exp)
    from eval_harness.judges.scorer import build_scorer
    scorer = build_scorer(exp, runs_dir=options.runs_dir)  # persists the verdict cache
    execution = exp.loaded.config.execution
    engine = dataclasses.replace(engine, executor=options.executor or execution.executor,
                                 ray_address=options.ray_address or execution.ray_address)
    eval_dir = Path(options.runs_dir) / exp.name
    if engine.shard is not None and engine.shard.note:
        print(f"[eval] note: {engine.shard.note}", file=sys.stderr)
    _say_agent_changed(exp, eval_dir)
    from eval_harness.cache.active import activated

    cache = open_cache(options, exp)
    engine = dataclasses.replace(engine, cache=cache,
                                 max_spend=checked_max_spend(options.max_spend))
    try:
        with activated(cache):  # the LLM judges' calls go through it too
            summary = execute(exp, scorer, engine)
            _rescore_stale_judges(summary, scorer, options.concurrency or 4)
    finally:  # also after Ctrl-C / quota; not when nothing was created (a setup error)
        if eval_dir.is_dir():
            _record(exp, eval_dir)
        if cache is not None:
            if cache.counts.lookups:
                print(f"[eval] model calls: {cache.counts.line()}", file=sys.stderr)
            cache.close()
    info = describe(summary)
    shard = f" (shard {engine.shard})" if engine.shard else ""
    print(f"[eval] {exp.name}{shard}: {info['ran']} of {info['cells']} cells run "
          f"({info['ok']} ok, {info['errored']} errored), {info['skipped_complete']} already "
          f"complete, {info['skipped_errored']} errored kept (--retry-errors reruns them), "
          f"{info['stale_rerun']} stale rerun; runs in {summary.eval_dir}", file=sys.stderr)
    if summary.errored:
        from eval_harness.analysis.failures import format_reasons

        print(f"[eval] errored: {format_reasons(summary.reasons)}", file=sys.stderr)
    return RunOutcome(exp=exp, summary=summary, info=info)


def _rescore_stale_judges(summary: EngineSummary, scorer: Any, concurrency: int) -> None:
    """Name the cases whose content changed (their cells were rerun), and rescore the
    complete records scored by judges the config has edited, added or removed."""
    plan = summary.plan
    if plan.changed_cases:
        shown = ", ".join(plan.changed_cases[:10]) + (" ..." if len(plan.changed_cases) > 10 else "")
        print(f"[eval] {len(plan.changed_cases)} case(s) changed (input or expected) since "
              f"their last run, their cells rerun: {shown}", file=sys.stderr)
    if not plan.rejudge or summary.aborted:
        return
    from eval_harness.judges.rescore import rescore_stale_judges

    what = "; ".join(f"{kind}: {', '.join(sorted(names))}"
                     for kind, names in sorted(plan.judge_changes.items()))
    done = rescore_stale_judges(scorer, plan.rejudge, concurrency=concurrency)
    print(f"[eval] judges changed since {len(plan.rejudge)} complete record(s) were scored "
          f"({what}): rescored {done} (no agent calls)", file=sys.stderr)


def _say_agent_changed(exp: Experiment, eval_dir: Path) -> None:
    """Say which agent files changed since the last run (their cells are stale and rerun:
    the file hashes are in the config digest)."""
    from eval_harness.config.recorded import recorded_fingerprint
    from eval_harness.matrix.fingerprint import changed_files

    before = recorded_fingerprint(eval_dir)
    if before is not None:
        changed = changed_files(before, exp.fingerprint)
        if changed:
            print(f"[eval] the agent changed since the last run: {', '.join(changed)}; "
                  "its cells are stale and rerun", file=sys.stderr)


def _record(exp: Experiment, eval_dir: Path) -> None:
    """Record this run's config and agent file hashes (for --analyze-only and the notice)."""
    from eval_harness._util.clock import utc_timestamp
    from eval_harness.config.recorded import record_config
    from eval_harness.judges.scorer import config_judge_digests

    record_config(exp.loaded, eval_dir, utc_timestamp(), exp.fingerprint,
                  judge_digests=config_judge_digests(exp.loaded.config))
