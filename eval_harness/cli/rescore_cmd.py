"""``orchestrate.py --config eval.yaml --rescore``: re-run judges over existing runs.

Reads ``<runs-dir>/<eval>/``, rewrites each complete case's record with fresh scores
(see :mod:`eval_harness.judges.rescore`), prints a summary (``--json``: the summary dict).
The judge models get their pre-flight check first unless ``--no-judge-check``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eval_harness.cli.args import config_overrides, input_overrides
from eval_harness.errors import UsageError
from eval_harness.judges.rescore import rescore_runs
from eval_harness.judges.scorer import build_scorer
from eval_harness.matrix.experiment import prepare


def _prepare(args: argparse.Namespace) -> Any:
    return prepare(args.config, cases=args.cases, limit=args.limit,
                   overrides=config_overrides(args), input_overrides=input_overrides(args),
                   condition_specs=args.condition)


def rescore(args: argparse.Namespace) -> int:
    """Rescore; return 0 (analysis and gates are the normal pipeline's business)."""
    exp = _prepare(args)
    eval_dir = Path(args.runs_dir) / exp.name
    if not eval_dir.is_dir():
        raise UsageError(f"no runs to rescore under {eval_dir}",
                         hint="pass --runs-dir DIR (the folder holding <eval>/)")
    return _rescore_dir(args, exp, eval_dir)


def rescore_then_analyze(args: argparse.Namespace) -> int:
    """``--analyze-only DIR... --rescore --config eval.yaml``: rescore the runs under each
    DIR (``runs/<eval>/``) with the config's judges, then analyse them."""
    if not args.config:
        raise UsageError("--rescore re-runs the judges, so it needs the config that names them",
                         hint="orchestrate --analyze-only DIR --config eval.yaml --rescore "
                              "(or orchestrate --config eval.yaml --rescore, then "
                              "--analyze-only DIR)")
    from eval_harness.cli.pipeline import analyze_only, resolve_paths

    exp = _prepare(args)
    for eval_dir in resolve_paths(args.analyze_only):
        _rescore_dir(args, exp, eval_dir)
    return analyze_only(args)


def _rescore_dir(args: argparse.Namespace, exp: Any, eval_dir: Path) -> int:
    if not args.no_judge_check:
        from eval_harness.judges.preflight import check_judge_models

        check_judge_models(exp)
    scorer = build_scorer(exp, runs_dir=args.runs_dir)
    from eval_harness.app.run import open_cache
    from eval_harness.cache.active import activated

    cache = open_cache(args, exp)
    try:
        with activated(cache):  # judge calls through the model-call cache
            summary = rescore_runs(exp, eval_dir, scorer, concurrency=args.concurrency or 4)
    finally:
        if cache is not None:
            cache.close()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"rescored {summary['rescored']} case(s) under {eval_dir}; "
          f"{summary['samples_with_errored_judges']} with an errored judge; "
          f"verdict cache {summary['cache_hits']} hit(s), {summary['cache_misses']} miss(es)")
    for item in summary["skipped"]:
        where = item["run"] + (f"/{item['case']}" if "case" in item else "")
        print(f"  skipped {where}: {item['reason']}")
    return 0
