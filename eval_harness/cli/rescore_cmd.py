"""``orchestrate.py --config eval.yaml --rescore``: re-run judges over existing runs.

Reads ``<runs-dir>/<eval>/``, rewrites each complete case's record with fresh scores
(see :mod:`eval_harness.judges.rescore`), prints a summary (``--json``: the summary dict).
The judge models get their pre-flight check first unless ``--no-judge-check``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval_harness.cli.args import config_overrides, input_overrides
from eval_harness.errors import UsageError
from eval_harness.judges.rescore import rescore_runs
from eval_harness.judges.scorer import build_scorer
from eval_harness.matrix.experiment import prepare


def rescore(args: argparse.Namespace) -> int:
    """Rescore; return 0 (analysis and gates are the normal pipeline's business)."""
    exp = prepare(args.config, cases=args.cases, limit=args.limit,
                  overrides=config_overrides(args), input_overrides=input_overrides(args),
                  condition_specs=args.condition, require_runner=False)
    eval_dir = Path(args.runs_dir) / exp.name
    if not eval_dir.is_dir():
        raise UsageError(f"no runs to rescore under {eval_dir}",
                         hint="pass --runs-dir DIR (the folder holding <eval>/)")
    if not args.no_judge_check:
        from eval_harness.judges.preflight import check_judge_models

        check_judge_models(exp)
    scorer = build_scorer(exp, runs_dir=args.runs_dir)
    summary = rescore_runs(exp, eval_dir, scorer, concurrency=args.concurrency or 4)
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
