"""``orchestrate.py --config eval.yaml``: run the matrix (resumable), then analyse.

Exit codes: whatever analysis returns (0/1/4) after a full run; 4 when every cell this
invocation ran errored (even with --no-analysis, even when older results exist); 2 on a config error (raised
before anything runs); 3 when quota/auth failures stopped the run (QuotaExhausted, raised
by the engine after keeping finished work) or when ``--max-spend`` stopped it (BudgetExhausted);
130 on Ctrl-C (KeyboardInterrupt reaches
``cli/main.py`` after the engine cleaned up).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_harness.cli.args import concurrency, config_overrides, input_overrides
from eval_harness.errors import NoUsableResults, UsageError
from eval_harness.matrix.experiment import Experiment, prepare
from eval_harness.runner.shard import parse_shard

if TYPE_CHECKING:  # the engine (and its HTTP stack) is imported only to run: --dry-run
    # takes concurrency() from here and must stay light (tests/cli/test_lazy_imports.py)
    from eval_harness.runner.engine import EngineOptions, EngineSummary


def options_from_args(args: argparse.Namespace) -> EngineOptions:
    """EngineOptions from the parsed flags."""
    from eval_harness.runner.engine import EngineOptions
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError("--concurrency must be >= 1", hint="e.g. --concurrency 4")
    if args.force and args.retry_errors:
        raise UsageError("--force and --retry-errors exclude each other",
                         hint="--force reruns everything; --retry-errors only errored cells")
    return EngineOptions(
        runs_dir=Path(args.runs_dir), concurrency=args.concurrency or 4, force=args.force,
        retry_errors=args.retry_errors, shard=parse_shard(args.shard), order=args.order,
        seed=args.seed, verbose=args.verbose,
        progress="off" if getattr(args, "json", False) else "auto",
        trace=not getattr(args, "no_trace", False),
    )


def run_matrix(args: argparse.Namespace) -> tuple[Experiment, EngineSummary, dict[str, Any]]:
    """Run every pending cell of the matrix (no analysis); return the experiment, the
    engine's summary and its one-line description (also printed on stderr)."""
    from eval_harness.runner.engine import describe, execute
    options = options_from_args(args)
    exp = prepare(args.config, cases=args.cases, limit=args.limit,
                  overrides=config_overrides(args), input_overrides=input_overrides(args),
                  condition_specs=args.condition)
    options = replace(options, concurrency=concurrency(args, exp.loaded.config))
    if exp.loaded.config.mlflow is not None:
        from eval_harness.reports.mlflow_log import require_mlflow

        require_mlflow()  # before any cell runs: exit 2 with the install hint
    if not args.no_judge_check:
        from eval_harness.judges.preflight import check_judge_models

        check_judge_models(exp)
    from eval_harness.judges.scorer import build_scorer

    scorer = build_scorer(exp, runs_dir=args.runs_dir)  # persists the verdict cache
    execution = exp.loaded.config.execution
    options = replace(options, executor=getattr(args, "executor", None) or execution.executor,
                      ray_address=getattr(args, "ray_address", None) or execution.ray_address)
    eval_dir = Path(args.runs_dir) / exp.name
    if options.shard is not None and options.shard.note:
        print(f"[eval] note: {options.shard.note}", file=sys.stderr)
    _say_agent_changed(exp, eval_dir)
    from eval_harness.cache.active import activated
    from eval_harness.cli.cost_opts import max_spend, open_cache

    cache = open_cache(args, exp)
    options = dataclasses.replace(options, cache=cache, max_spend=max_spend(args))
    try:
        with activated(cache):  # the LLM judges' calls go through it too
            summary = execute(exp, scorer, options)
            _rescore_stale_judges(summary, scorer, args.concurrency or 4)
    finally:  # also after Ctrl-C / quota; not when nothing was created (a setup error)
        if eval_dir.is_dir():
            _record(exp, eval_dir)
        if cache is not None:
            if cache.counts.lookups:
                print(f"[eval] model calls: {cache.counts.line()}", file=sys.stderr)
            cache.close()
    info = describe(summary)
    shard = f" (shard {options.shard})" if options.shard else ""
    print(f"[eval] {exp.name}{shard}: {info['ran']} of {info['cells']} cells run "
          f"({info['ok']} ok, {info['errored']} errored), {info['skipped_complete']} already "
          f"complete, {info['skipped_errored']} errored kept (--retry-errors reruns them), "
          f"{info['stale_rerun']} stale rerun; runs in {summary.eval_dir}", file=sys.stderr)
    if summary.errored:
        from eval_harness.analysis.failures import format_reasons

        print(f"[eval] errored: {format_reasons(summary.reasons)}", file=sys.stderr)
    return exp, summary, info


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
    from eval_harness._util.clock import utc_timestamp as utc_now
    from eval_harness.config.recorded import record_config
    from eval_harness.judges.scorer import config_judge_digests

    record_config(exp.loaded, eval_dir, utc_now(), exp.fingerprint,
                  judge_digests=config_judge_digests(exp.loaded.config))


def run(args: argparse.Namespace) -> int:
    """Run every pending cell of the matrix, then analyse and report."""
    exp, summary, info = run_matrix(args)
    if getattr(args, "json", False) and args.no_analysis:
        print(json.dumps(info))
    # every cell this invocation ran errored: never exit 0, even if older results exist
    all_failed = summary.errored > 0 and summary.ok == 0
    if not args.no_analysis:
        from eval_harness.cli.pipeline import analyze_and_report

        code = analyze_and_report(args, exp, summary.eval_dir)
        if not all_failed:
            return code
    if all_failed:
        raise NoUsableResults(f"every cell run errored ({summary.errored}); reasons above",
                              hint="try one case with -v: --limit 1 -v")
    return 0
