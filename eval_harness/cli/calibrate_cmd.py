"""``orchestrate.py calibrate --labels labels.jsonl [--min-kappa K] [--json]``.

Agreement (Wilson CI), Cohen's kappa (seeded bootstrap CI), false-pass / false-fail rates
and the confusion matrix per (judge, rubric); the label format is documented in
:mod:`eval_harness.judges.calibration`. With ``--min-kappa K`` exit 1 unless every group has
at least 30 labels and kappa >= K.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eval_harness.cli.prog import prog
from eval_harness.judges.calibration import MIN_LABELS, calibrate


def build_parser() -> argparse.ArgumentParser:
    """``calibrate`` arguments."""
    p = argparse.ArgumentParser(prog=f"{prog()} calibrate",
                                description="Measure judge agreement with human labels.")
    p.add_argument("--labels", required=True, metavar="FILE",
                   help='JSONL: {"judge", "rubric"?, "human": bool, "judge_verdict": bool}')
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
    report = calibrate(Path(args.labels), seed=args.seed, reps=args.bootstrap,
                       min_kappa=args.min_kappa)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0 if report["passed"] else 1
