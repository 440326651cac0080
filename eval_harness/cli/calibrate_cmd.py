"""``orchestrate calibrate RUNS... [--labels FILE] [--min-kappa K] [--json]``.

With run directories, the labels (``<eval-dir>/labels.jsonl``, written by ``orchestrate
serve``: :mod:`eval_harness.store.labels`) are matched to the judge verdicts stored in the
runs (:mod:`eval_harness.judges.label_match`). Without, ``--labels FILE`` is a
self-contained file that carries each judge verdict itself. Agreement (Wilson CI), Cohen's kappa (seeded bootstrap CI), false-pass / false-fail rates
and the confusion matrix per (judge, rubric); the label format is documented in
:mod:`eval_harness.judges.calibration`. With ``--min-kappa K`` exit 1 unless every group has
at least 30 labels and kappa >= K.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from eval_harness.cli.prog import prog
from eval_harness.errors import UsageError
from eval_harness.judges.calibration import MIN_LABELS, calibrate


def build_parser() -> argparse.ArgumentParser:
    """``calibrate`` arguments."""
    p = argparse.ArgumentParser(prog=f"{prog()} calibrate",
                                description="Measure judge agreement with human labels.")
    p.add_argument("runs", nargs="*", metavar="RUNS",
                   help="run directories root(s): match their labels.jsonl to the stored "
                        "verdicts")
    p.add_argument("--labels", metavar="FILE",
                   help="with RUNS: a labels file to use instead of each eval's labels.jsonl; "
                        'alone: JSONL {"judge", "rubric"?, "human": bool, "judge_verdict": bool}')
    p.add_argument("--pass-mark", type=float, default=0.5, metavar="X",
                   help="a numeric judge passes at normalised value >= X (default 0.5)")
    p.add_argument("--min-kappa", type=float, metavar="K",
                   help=f"exit 1 unless every group has >= {MIN_LABELS} labels and kappa >= K")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--bootstrap", type=int, default=2000, metavar="N",
                   help="bootstrap resamples (default 2000)")
    p.add_argument("--debug", action="store_true", help="full tracebacks on errors")
    return p


def _fmt(x: Any) -> str:
    return "n/a" if x is None or x != x else f"{x:.3f}"


def render(report: dict[str, Any]) -> str:
    """Plain-text table."""
    lines = [f"{'judge':<20} {'rubric':<10} {'n':>4}  {'agree [95% CI]':<22} "
             f"{'kappa [95% CI]':<24} {'f-pass':>6} {'f-fail':>6}  tp/fn/fp/tn"]
    for g in report["groups"]:
        c = g["confusion"]
        agree = f"{_fmt(g['agreement'])} [{_fmt(g['agreement_ci'][0])}, {_fmt(g['agreement_ci'][1])}]"
        kap = f"{_fmt(g['kappa'])} [{_fmt(g['kappa_ci'][0])}, {_fmt(g['kappa_ci'][1])}]"
        lines.append(f"{g['judge']:<20} {g['rubric'] or '-':<10} {g['n']:>4}  {agree:<22} "
                     f"{kap:<24} {_fmt(g['false_pass_rate']):>6} {_fmt(g['false_fail_rate']):>6}"
                     f"  {c['tp']}/{c['fn']}/{c['fp']}/{c['tn']}")
        lines.extend(f"  FAIL: {problem}" for problem in g["problems"])
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run; 0, or 1 when a --min-kappa gate fails (2 on a bad labels file)."""
    args = build_parser().parse_args(argv)
    if args.runs:
        report = _runs_report(args)
    elif args.labels:
        report = calibrate(Path(args.labels), seed=args.seed, reps=args.bootstrap,
                           min_kappa=args.min_kappa)
    else:
        raise UsageError("calibrate needs run directories or --labels FILE",
                         hint="orchestrate calibrate runs/<eval>/ --min-kappa 0.6")
    print(json.dumps(report, indent=2) if args.json else render(report))
    for row in report.get("unmatched") or []:
        print(f"warning: label not matched ({row['reason']}): run {row['run']} case "
              f"{row['case']} judge {row['judge']} r{row['replication']}", file=sys.stderr)
    return 0 if report["passed"] else 1


def label_files(roots: list[str]) -> list[Path]:
    """The labels.jsonl of every eval directory (a run directory's parent) under ``roots``."""
    from eval_harness.analysis.loading.discover import find_run_dirs
    from eval_harness.store.labels import labels_path

    dirs = sorted({Path(r.path).parent for r in find_run_dirs(roots)})
    return [p for p in map(labels_path, dirs) if p.is_file()]


def _runs_report(args: argparse.Namespace) -> dict[str, Any]:
    from eval_harness.app.analyze import load_frame
    from eval_harness.app.options import AnalysisOptions
    from eval_harness.judges.label_match import runs_calibration
    from eval_harness.store.labels import read_labels

    files = [Path(args.labels)] if args.labels else label_files(args.runs)
    if args.labels and not files[0].is_file():
        raise UsageError(f"labels file not found: {args.labels}", hint="check --labels")
    if not files:
        raise UsageError(f"no labels.jsonl beside the runs under {', '.join(args.runs)}",
                         hint="label verdicts in `orchestrate serve`, or pass --labels FILE")
    labels = [row for f in files for row in read_labels(f)]
    if not labels:
        raise UsageError(f"no labels in {', '.join(map(str, files))}",
                         hint="label verdicts in `orchestrate serve` first")
    frame = load_frame([Path(r) for r in args.runs], None, AnalysisOptions())
    return runs_calibration(frame, labels, source=", ".join(map(str, files)),
                            pass_mark=args.pass_mark, seed=args.seed, reps=args.bootstrap,
                            min_kappa=args.min_kappa)
