"""``--dry-run`` and ``--print-config``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from eval_harness.cli.args import concurrency, config_overrides, input_overrides
from eval_harness.config.loader import load_config
from eval_harness.config.masking import mask_secrets
from eval_harness.matrix.checks import self_judging, unconsumed_factors
from eval_harness.matrix.experiment import Experiment, prepare
from eval_harness.matrix.plan_estimate import estimate_cost
from eval_harness.runner.shard import Shard
from eval_harness.store.history import scan_earlier


def print_config(args: argparse.Namespace) -> int:
    """Print the merged config (``${VAR}`` as written, literal secrets masked)."""
    loaded = load_config(args.config, strict=False)  # printing needs no secrets
    masked = mask_secrets(loaded.raw)
    if args.json:
        print(json.dumps(masked, indent=2, default=str))
    else:
        sys.stdout.write(yaml.safe_dump(masked, sort_keys=False, allow_unicode=True))
    return 0


def _llm_judge_calls(exp: Experiment) -> int:
    cfg = exp.loaded.config
    per_run = 0
    for judge in cfg.judges:
        if judge.is_llm and judge.pairwise is None:
            per_run += judge.samples
    calls = per_run * exp.total_runs
    n = len(exp.conditions)
    for judge in cfg.judges:
        if judge.pairwise is not None:
            spec = judge.pairwise if isinstance(judge.pairwise, dict) else {}
            # a reference compares every other condition with it only: n - 1 pairs
            pairs = n - 1 if spec.get("reference") is not None else n * (n - 1) // 2
            calls += 2 * judge.samples * pairs * len(exp.cases) * exp.replications
    return calls


def build_summary(exp: Experiment, args: argparse.Namespace) -> dict[str, Any]:
    """The dry-run report as a dict (also the ``--json`` output)."""
    cfg = exp.loaded.config
    warnings: list[str] = []
    for name in unconsumed_factors(cfg, exp.matrix):
        warnings.append(f"factor `{name}` is consumed by nothing (not in the command, prompt "
                        "or arguments): it still defines conditions")
    for model in self_judging(cfg, exp.matrix):
        warnings.append(f"judge model `{model}` is also a model under test (self-preference bias)")
    if cfg.mlflow is not None:
        import importlib.util

        from eval_harness.reports.mlflow_log import HINT

        if importlib.util.find_spec("mlflow") is None:
            warnings.append(f"mlflow: block but MLflow is not installed: the run will exit 2 "
                            f"({HINT})")
    from eval_harness.errors import ConfigError
    from eval_harness.judges.validate import validate_judges

    try:
        warnings.extend(validate_judges(exp))
    except ConfigError as exc:
        if exc.file is None:  # name the config file the judge came from
            raise ConfigError(exc.detail, path=exc.key_path,
                              file=str(exp.loaded.path), hint=exc.hint) from None
        raise
    runs_dir = Path(args.runs_dir)
    earlier = scan_earlier(runs_dir / exp.name)  # one pass: mean cost, latency, tokens
    history = earlier.history
    cost = estimate_cost(
        exp.total_runs, avg_cost_per_run=args.avg_cost_per_run,
        max_budget_usd=cfg.execution.max_budget_usd or (cfg.runner.max_budget_usd if cfg.runner else None),
        history=history, concurrency=concurrency(args, cfg),
    )
    from eval_harness.cli.cost_estimate import table_estimate

    table = table_estimate(exp, earlier)
    if table is not None:  # price table × tokens, per condition and judge (docs/cost.md)
        cost["table"] = table
        if args.avg_cost_per_run is None and table["complete"]:
            cost.update(cost_usd=table["point_usd"], cost_kind="point",
                        cost_source=f"price table {table['price_table_date']} × tokens",
                        upper_bound_usd=table["upper_usd"])
    summary: dict[str, Any] = {
        "eval": exp.name,
        "conditions": [
            {"condition_id": c.condition_id, "levels": c.levels, "label": c.label,
             "runs": len(exp.cases) * exp.replications}
            for c in exp.conditions
        ],
        "factors": {k: [getattr(v, "name", v) for v in vals] for k, vals in exp.matrix.factors.items()},
        "n_conditions": len(exp.conditions),
        "n_cases": len(exp.cases),
        "replications": exp.replications,
        "total_runs": exp.total_runs,
        "judge_calls": _llm_judge_calls(exp),
        "pass_rule": _pass_rule_text(exp),
        "estimate": cost,
        "warnings": warnings,
    }
    from eval_harness.runner.shard import parse_shard

    shard = parse_shard(getattr(args, "shard", None))
    if shard is not None:
        summary["shard"] = shard_summary(exp, runs_dir, shard, args)
    from eval_harness.cli.planning import planning_summary

    power = planning_summary(exp, runs_dir)
    if power is not None:
        summary["power"] = power
    return summary


def shard_summary(exp: Experiment, runs_dir: Path, shard: Shard,
                  args: argparse.Namespace) -> dict[str, Any]:
    """``--dry-run --shard K/N``: this shard's cells (what a run of it would plan, earlier
    records in ``runs_dir`` counted as the engine counts them)."""
    from eval_harness.runner.plan import make_plan
    from eval_harness.runner.shard import check_github_limit
    from eval_harness.store.index import ResumeIndex

    check_github_limit(shard, args.ci)
    plan = make_plan(exp.conditions, exp.cases, exp.replications, exp.digests,
                     ResumeIndex.scan(runs_dir / exp.name), shard=shard, order="grid",
                     force=args.force, retry_errors=args.retry_errors)
    per_condition: dict[str, int] = {}
    for cell in plan.todo:
        cid = cell.condition.condition_id
        per_condition[cid] = per_condition.get(cid, 0) + 1
    return {"shard": str(shard), "note": shard.note, "runs": plan.total,
            "to_run": len(plan.todo), "skipped_complete": plan.skipped_complete,
            "skipped_errored": plan.skipped_errored, "stale_rerun": plan.stale,
            "to_run_per_condition": per_condition,
            "cases": sorted({c.case.case_id for c in plan.todo}),
            "cells": [{"condition_id": c.condition.condition_id, "case_id": c.case.case_id,
                       "replication": c.replication} for c in plan.todo]}


def _pass_rule_text(exp: Experiment) -> str:
    """The pass rule the analysis of this config will use, in one line."""
    from eval_harness.app.options import verdict_rule_of

    return str(verdict_rule_of(exp.loaded).text())


def dry_run(args: argparse.Namespace) -> int:
    """Validate config, dataset and judges; print the grid, totals and estimates."""
    exp = prepare(args.config, cases=args.cases, limit=args.limit,
                  overrides=config_overrides(args), input_overrides=input_overrides(args),
                  condition_specs=args.condition)
    summary = build_summary(exp, args)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
        return 0
    from eval_harness.reports.dry_run_view import render_dry_run

    render_dry_run(summary)
    return 0
