"""``orchestrate.py --config eval.yaml``: run the matrix (resumable), then analyse.

The flags become :class:`~eval_harness.app.options.RunOptions`; the run is
:func:`eval_harness.app.run.run`, the analysis ``cli.pipeline.analyze_and_report``.

Exit codes: whatever analysis returns (0/1/4) after a full run; 4 when every cell this
invocation ran errored (even with --no-analysis, even when older results exist); 2 on a config error (raised
before anything runs); 3 when quota/auth failures stopped the run (QuotaExhausted, raised
by the engine after keeping finished work) or when ``--max-spend`` stopped it (BudgetExhausted);
130 on Ctrl-C (KeyboardInterrupt reaches
``cli/main.py`` after the engine cleaned up).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from eval_harness.app.options import RunOptions
from eval_harness.errors import NoUsableResults

if TYPE_CHECKING:  # the engine (and its HTTP stack) is imported only to run
    from eval_harness.matrix.experiment import Experiment
    from eval_harness.runner.engine import EngineSummary


def run_options(args: argparse.Namespace) -> RunOptions:
    """The run options of the parsed flags (same names; ``--json`` is ``quiet``)."""
    return RunOptions.pick(vars(args), quiet=bool(getattr(args, "json", False)))


def run_matrix(args: argparse.Namespace) -> tuple[Experiment, EngineSummary, dict[str, Any]]:
    """Run every pending cell of the matrix (no analysis); return the experiment, the
    engine's summary and its one-line description (also printed on stderr)."""
    from eval_harness.app.run import run as run_cells

    done = run_cells(run_options(args))
    return done.exp, done.summary, done.info


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
