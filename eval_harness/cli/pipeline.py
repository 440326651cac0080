"""After the matrix (or ``--analyze-only``): the CLI's door to ``app.analyze``.

The flags become :class:`~eval_harness.app.options.AnalysisOptions`; the analysis
(load -> anova.json -> comparisons.json + leaderboard -> thresholds -> reports -> baseline
export -> gate lines) is :func:`eval_harness.app.analyze.analyze`; this module prints the
results (console report or ``--json``), ``--timings`` and the failure lines, and returns
the exit code (1 when a threshold or the regression gate fails).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval_harness._util.phase_timings import phase, recording
from eval_harness.app.analyze import (
    AnalysisOutputs,
    analysis_config,
    analyze,
    drift_note,
    resolve_paths,
)
from eval_harness.app.options import AnalysisOptions
from eval_harness.config.loader import LoadedConfig
from eval_harness.errors import NoUsableResults

__all__ = ["AnalysisOutputs", "analysis_options", "analyze_and_report", "analyze_only",
           "resolve_paths", "run_analysis"]


def analysis_options(args: argparse.Namespace) -> AnalysisOptions:
    """The analysis options of the parsed flags (same names, snake_case)."""
    return AnalysisOptions.pick(vars(args))


def run_analysis(
    args: argparse.Namespace, paths: Sequence[Path], loaded: LoadedConfig | None,
    *, exp: Any = None, eval_dir: Path | None = None,
) -> int:
    """Analyse run directories under ``paths``; write outputs; return the exit code.
    ``--timings``: the cost of each phase on stderr and in ``<output>/timings.json``."""
    options = analysis_options(args)
    with recording(bool(getattr(args, "timings", False))) as timings:
        out = analyze(paths, options, loaded, exp=exp, eval_dir=eval_dir)
        with phase("console"):
            _print_results(args, out)
    if timings is not None:
        timings.write_json(out.out_dir / "timings.json")
        timings.print_table()
        print(f"wrote {out.out_dir / 'timings.json'}", file=sys.stderr)
    if out.export_note:
        print(out.export_note, file=sys.stderr)
    for line in out.failures:
        print(line, file=sys.stderr)
    if out.errored_judges and not options.allow_errored_judges:
        names = ", ".join(f"`{j}`" for j in out.errored_judges)
        raise NoUsableResults(f"judge(s) {names} errored on every sample (reasons above), "
                              "so every composite that includes them is errored",
                              hint="fix the judge, then `--rescore`; or pass "
                                   "--allow-errored-judges to drop it from the composite "
                                   "(the other weights renormalised) and analyse the rest")
    return out.exit_code


def _print_results(args: argparse.Namespace, out: AnalysisOutputs) -> None:
    """The results on stdout: anova.json with ``--json``, else the console report."""
    if args.json:
        print(json.dumps(out.anova, indent=2, default=str))
        return
    from rich.console import Console

    from eval_harness.reports.console import print_console

    print_console(Console(highlight=False), out.documents, out.frame)
    shown = [out.files["anova.json"], *(p for k, p in out.files.items() if k.startswith("report."))]
    print(f"wrote {', '.join(map(str, shown))}")


def analyze_and_report(args: argparse.Namespace, exp: Any, eval_dir: Path) -> int:
    """After a run: analyse ``eval_dir`` with the run's config."""
    return run_analysis(args, [Path(eval_dir)], exp.loaded, exp=exp, eval_dir=Path(eval_dir))


def analyze_only(args: argparse.Namespace) -> int:
    """``--analyze-only DIR...``: analyse existing runs, with ``--config``, the config
    recorded at run time, or none (see :func:`eval_harness.app.analyze.analysis_config`)."""
    paths = resolve_paths(args.analyze_only)
    loaded = analysis_config(args.config, paths)
    if loaded is not None:
        warning = drift_note(paths, loaded)
        if warning:
            print(warning, file=sys.stderr)
    return run_analysis(args, paths, loaded)
