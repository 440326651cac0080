"""``orchestrate.py report``: regenerate reports from existing analysis output and runs.

Reads ``anova.json`` (required) and, when present, ``comparisons.json``,
``leaderboard.json``, ``thresholds.json`` and ``pairwise.json`` from the output directory,
loads the run directories (for pass rates, latency, cost, the case grid and the per-case
drill-down) and writes report.md / report.json / report.html. Nothing is run or re-judged;
a missing leaderboard is recomputed from the runs (cheap and deterministic).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from eval_harness.cli.prog import prog
from eval_harness.errors import AnalysisError, UsageError


def build_parser() -> argparse.ArgumentParser:
    """Arguments of the ``report`` subcommand."""
    p = argparse.ArgumentParser(
        prog=f"{prog()} report",
        description="Regenerate report.md / report.json / report.html from analysis output "
        "(anova.json, comparisons.json) and run directories, without running anything.")
    p.add_argument("--output", metavar="DIR",
                   help="analysis directory holding anova.json (default: the only "
                        "analysis/<eval>/ that has one)")
    p.add_argument("--runs", nargs="+", metavar="DIR", default=None,
                   help="run directories root(s) (default: runs/)")
    p.add_argument("--format", default="md,json,html", metavar="LIST",
                   help="comma-separated: md, json, html (default: all)")
    p.add_argument("--all-cases", action="store_true",
                   help="console: show every case in the case grid, not only differing ones")
    p.add_argument("--quiet", action="store_true", help="do not print the console report")
    p.add_argument("--debug", action="store_true", help="full tracebacks on errors")
    return p


def _default_output() -> Path:
    found = sorted(p.parent for p in Path("analysis").glob("*/anova.json"))
    if len(found) == 1:
        return found[0]
    raise UsageError("--output DIR is required" + (f" ({len(found)} analysis directories found)"
                                                   if found else ""),
                     hint=f"{prog()} report --output analysis/<eval>/")


def _load(path: Path, *, required: bool = False) -> Any:
    if not path.is_file():
        if required:
            raise UsageError(f"{path} not found",
                             hint="run orchestrate.py --analyze-only runs/<eval>/ first")
        return None
    from eval_harness.config.jsonl import read_json_file

    return read_json_file(path)  # exit 2 naming the file, whatever is wrong with it


def _say_assumed_rule(out: Path, comparisons: Any) -> None:
    """The pass rule is read from comparisons.json (``verdict_rule``); without one the
    report counts passes by the default rule: say so (one line), never silently."""
    if isinstance(comparisons, dict) and comparisons.get("verdict_rule"):
        return
    from eval_harness.analysis.compare.verdicts import VerdictRule

    why = ("records no pass rule (verdict_rule)" if isinstance(comparisons, dict)
           else "not found")
    print(f"warning: {out / 'comparisons.json'} {why}: assuming the default pass rule, "
          f"{VerdictRule().text()}; rerun --analyze-only to record the configured one",
          file=sys.stderr)


def main(argv: list[str]) -> int:
    """Run the subcommand; return the exit code (0, or 2 via UsageError)."""
    args = build_parser().parse_args(argv)
    from eval_harness.reports.report_files import parse_formats

    formats = parse_formats(args.format)
    out = Path(args.output) if args.output else _default_output()
    anova = _load(out / "anova.json", required=True)
    comparisons = _load(out / "comparisons.json")
    _say_assumed_rule(out, comparisons)
    leaderboard = _load(out / "leaderboard.json")
    if leaderboard is None and isinstance(comparisons, dict):
        leaderboard = comparisons.get("leaderboard")
    thresholds = _load(out / "thresholds.json")
    if isinstance(thresholds, dict):
        thresholds = thresholds.get("results")
    roots = [Path(r) for r in (args.runs or ["runs"])]
    pairwise = _load(out / "pairwise.json")
    # The pairwise judges write pairwise.json into the eval's runs directory.
    for cand in (p for r in roots for p in (r / "pairwise.json", *sorted(r.glob("*/pairwise.json")))):
        if pairwise is None and cand.is_file():
            pairwise = _load(cand)
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        raise UsageError(f"run directory not found: {', '.join(missing)}",
                         hint="pass --runs DIR (the runs root used by the analysis)")
    from eval_harness.app.analyze import load_frame
    from eval_harness.app.options import AnalysisOptions

    frame = load_frame(roots, None, AnalysisOptions())  # the one call of the loader
    if frame.empty:
        raise AnalysisError(f"no runs found under {', '.join(map(str, roots))}")
    if leaderboard is None:
        from eval_harness.analysis.compare.leaderboard import build_leaderboard

        leaderboard = build_leaderboard(frame)
    from rich.console import Console

    from eval_harness._util.clock import utc_now_iso
    from eval_harness.reports.console import print_console
    from eval_harness.reports.documents import AnalysisDocuments
    from eval_harness.reports.report_files import write_reports
    from eval_harness.reports.report_model import build_report

    docs = AnalysisDocuments(anova=anova, comparisons=comparisons, leaderboard=leaderboard,
                             thresholds=thresholds, pairwise=pairwise)
    # the report model once, for files and console
    docs = replace(docs, report=build_report(docs, frame, generated_at=utc_now_iso()))
    written = write_reports(out, docs, frame, runs_root=roots, formats=formats)
    console = Console(highlight=False)
    if not args.quiet:
        print_console(console, docs, frame, show_all_cases=args.all_cases)
    for fmt_name, path in written.items():
        console.print(f"wrote {fmt_name}: {path}", highlight=False, markup=False)
    return 0
