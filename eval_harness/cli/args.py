"""The argument parser: every flag of ``orchestrate.py`` in one place."""

from __future__ import annotations

import argparse
import os
from typing import Any

from eval_harness._version import __version__
from eval_harness.cli.prog import prog

EPILOG = """\
modes (default: run the matrix, then analyse and report):
  --dry-run             validate everything, print the grid and a cost estimate
  --print-config        print the merged config (secrets masked)
  --lint                lint the dataset
  --analyze-only DIR    analyse existing run directories (no --config needed)
  --rescore             re-run judges over existing run directories
  schema                print the JSON Schema of eval.yaml
  report                regenerate reports from analysis output + run directories
  calibrate RUNS        judge agreement with the labels beside the runs (Cohen's kappa)
  init [DIR]            write a starter eval (runs offline, no API key)
  runs RUNS             list run directories: conditions, replications, statuses
  show RUNS --case ID   one case across the conditions: answers, judge values, reasons
  cache stats|clear     inspect or empty the model-call cache (docs/cost.md)

exit codes: 0 ok; 1 threshold/regression gate failed; 2 usage/config error;
            3 aborted on quota/auth failure or --max-spend reached; 4 nothing usable (every cell errored, or a
            judge errored on every sample); 70 internal error; 130 interrupted (Ctrl-C);
            143 terminated (SIGTERM)
"""


def build_parser() -> argparse.ArgumentParser:
    """The main (flag-style) parser."""
    p = argparse.ArgumentParser(
        prog=prog(),
        description="Factorial evaluation of LLM apps, agents and skills, with mixed-effects ANOVA.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"orchestrate (factorial-eval-harness) {__version__}")
    g = p.add_argument_group("common")
    g.add_argument("--config", metavar="FILE", help="eval.yaml to use")
    g.add_argument("--runs-dir", metavar="DIR", default=os.environ.get("AGENT_EVAL_RUNS_DIR", "runs"),
                   help="run directories root (default: $AGENT_EVAL_RUNS_DIR, else runs/)")
    g.add_argument("--model", metavar="MODEL",
                   help="sets models.skill: the model of conditions without a `model` factor")
    g.add_argument("--input-override", action="append", metavar="NAME=VALUE",
                   help="merge NAME=VALUE into every case input (repeatable)")
    g.add_argument("--output", metavar="DIR", help="analysis/report output (default: analysis/<eval>/)")
    g.add_argument("--cases", nargs="+", metavar="ID", help="only these case ids")
    g.add_argument("--limit", type=int, metavar="N", help="only the first N cases")
    g.add_argument("--condition", action="append", metavar="SPEC",
                   help="only conditions matching levels (model=a,effort=low), an id prefix or a label; "
                   "repeatable")
    g.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    g.add_argument("-v", "--verbose", action="store_true", help="tee agent output live; more detail")
    g.add_argument("--debug", action="store_true", help="full tracebacks on errors")

    g = p.add_argument_group("validate")
    g.add_argument("--dry-run", action="store_true", help="validate and show the grid; run nothing")
    g.add_argument("--print-config", action="store_true", help="print the merged config, secrets masked")
    g.add_argument("--lint", action="store_true", help="lint the dataset and exit")
    g.add_argument("--avg-cost-per-run", type=float, metavar="USD", help="cost estimate per run for --dry-run")
    g.add_argument("--ci", choices=["github", "none"], default=None,
                   help="with --dry-run --shard: where the shards will run; github refuses more "
                   "than 256 shards (default: github when GITHUB_ACTIONS=true)")

    g = p.add_argument_group("run")
    g.add_argument("--concurrency", type=int, default=None, metavar="N",
                   help="cells in flight (default: execution.parallelism, else 4)")
    g.add_argument("--force", action="store_true", help="rerun complete cells")
    g.add_argument("--retry-errors", action="store_true", help="rerun only errored cells")
    g.add_argument("--shard", metavar="K/N|auto", help="run a deterministic 1/N of the cells (K is 1-based)")
    g.add_argument("--executor", choices=["local", "ray"], default=None,
                   help="where cells run: local threads, or Ray tasks on a cluster "
                   "(default: execution.executor, else local)")
    g.add_argument("--ray-address", metavar="ADDR", default=None,
                   help="--executor ray: auto, host:6379 or ray://host:10001 (default: "
                   "execution.ray_address, else $RAY_ADDRESS, else a new local cluster)")
    g.add_argument("--order", choices=["random", "grid"], default="random",
                   help="cell order: seeded interleaved random (default) or grid")
    g.add_argument("--seed", type=int, default=0, help="seed of the cell order (default 0)")
    g.add_argument("--no-judge-check", action="store_true", help="skip the judge models' pre-flight call")
    g.add_argument("--no-analysis", action="store_true", help="run only; do not analyse afterwards")
    g.add_argument("--no-trace", action="store_true",
                   help="store no trace.json per case (judges still see the trace)")
    from eval_harness.cli.cost_opts import add_cost_flags

    add_cost_flags(g)

    g = p.add_argument_group("analysis")
    g.add_argument("--analyze-only", nargs="+", metavar="DIR", help="analyse existing run directories")
    g.add_argument("--method", type=str.lower, choices=["auto", "rm", "mixed", "lmm"],
                   help="auto (default: rm when every case has every cell, else mixed), rm, "
                   "mixed (by-case random slopes) or lmm (random intercept)")
    g.add_argument("--ddf", type=str.lower, choices=["kenward-roger", "satterthwaite"],
                   help="denominator df of the mixed model (flag > config > kenward-roger)")
    g.add_argument("--correction", type=str.lower, choices=["holm", "bh", "fdr_bh", "none"],
                   help="multiple-comparison correction (flag > config > holm)")
    g.add_argument("--per-judge", action="store_true", help="also screen each judge")
    g.add_argument("--format", choices=["aeh"], default=None, dest="output_format",
                   help="aeh: also write anova.json beside the runs, where agent-eval-harness "
                        "writes it (automatic for its run directories)")
    g.add_argument("--aeh-errors", choices=["exclude", "zero"], default="exclude",
                   help="agent-eval-harness runs: a case where nothing could be scored is "
                        "excluded as errored (default) or scored 0 as that tool does")
    g.add_argument("--keep-incomplete", action="store_true", help="lmm: keep incomplete cases (fitted model)")
    g.add_argument("--simple-effects", metavar="A:B|B|auto", action="append",
                   help="contrasts of factor A within each level of B (B alone: every other "
                        "factor; auto: both ways for each significant two-way interaction); "
                        "repeatable")
    g.add_argument("--allow-errored-judges", action="store_true",
                   help="a judge that errored on every sample is reported, but does not make "
                        "the exit code 4")
    g.add_argument("--export-parquet", metavar="FILE", help="write the tidy frame as Parquet")
    g.add_argument("--no-report", action="store_true",
                   help="write anova.json and comparisons.json but no report.md/.json/.html")
    g.add_argument("--timings", action="store_true",
                   help="print wall/CPU seconds and peak-RSS growth of each analysis phase on "
                        "stderr and write them to <output>/timings.json")
    g.add_argument("--rescore", action="store_true", help="re-run judges over existing runs")

    g = p.add_argument_group("compare")
    g.add_argument("--reference", metavar="LEVELS", help="reference condition, e.g. model=m1,effort=low")
    g.add_argument("--baseline", metavar="FILE", help="compare against a committed baseline file")
    g.add_argument("--export", metavar="FILE", help="write a portable baseline file")
    g.add_argument("--compact", action="store_true", help="with --export: ids, hashes and scores only")
    g.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when the gate (--gate) fails; docs/cli.md says what it tests")
    g.add_argument("--gate", choices=["overall", "cases", "strict"], default=None,
                   help="gate rule: overall (default: Holm across conditions of a one-sided "
                        "case-stratified permutation test of a drop in pass rate; false "
                        "alarm <= alpha for the whole gate), cases (also each case, one "
                        "Holm family), strict (any case whose verdict got worse: for "
                        "deterministic apps)")
    g.add_argument("--significant-only", action="store_true",
                   help="older spelling of --gate cases")
    return p


def build_schema_parser() -> argparse.ArgumentParser:
    """``orchestrate schema``."""
    p = argparse.ArgumentParser(prog=f"{prog()} schema",
                                description="Print the JSON Schema of eval.yaml (for editors).")
    p.add_argument("--debug", action="store_true")
    return p


def config_overrides(args: argparse.Namespace) -> dict[str, object]:
    """Config keys set by flags (``--model`` -> models.skill)."""
    from eval_harness.app.options import RunOptions

    return RunOptions(config="", model=getattr(args, "model", None)).config_overrides()


def input_overrides(args: argparse.Namespace) -> dict[str, str]:
    """``--input-override NAME=VALUE`` pairs (values stay strings, as agent-eval-harness)."""
    from eval_harness.app.options import RunOptions

    items = getattr(args, "input_override", None)
    return RunOptions(config="", input_override=items).input_overrides()


def concurrency(args: argparse.Namespace, config: Any) -> int:
    """--concurrency, else ``execution.parallelism`` (agent-eval-harness), else 4."""
    from eval_harness.app.options import effective_concurrency

    return effective_concurrency(args.concurrency, config)
