"""Regression comparisons, baselines, the CI gate and the leaderboard (pure functions).

Entry points: ``build_comparisons`` (the ``comparisons.json`` document), ``gate``,
``export_baseline`` / ``load_baseline``, ``build_leaderboard``, ``parse_reference``.
"""

from __future__ import annotations

from eval_harness.analysis.compare.baseline import export_baseline, load_baseline
from eval_harness.analysis.compare.build import build_comparisons, parse_reference, select_reference
from eval_harness.analysis.compare.gate import gate
from eval_harness.analysis.compare.leaderboard import build_leaderboard
from eval_harness.analysis.compare.verdicts import VerdictRule, case_verdicts, sample_table

__all__ = [
    "VerdictRule",
    "build_comparisons",
    "build_leaderboard",
    "case_verdicts",
    "export_baseline",
    "gate",
    "load_baseline",
    "parse_reference",
    "sample_table",
    "select_reference",
]
