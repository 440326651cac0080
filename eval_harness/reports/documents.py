"""The result documents of one analysis, as one value: what the report renderers
(``build_report``, ``print_console``, ``write_reports``) take besides the tidy frame.

The analysis (``eval_harness.app.analyze``) builds it; ``orchestrate.py report`` reads it
back from an analysis directory. Only ``anova`` is required: a missing document renders
as "not available" (comparisons, leaderboard, pairwise) or no section (thresholds), exactly
as when the file is absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["AnalysisDocuments"]


@dataclass(frozen=True)
class AnalysisDocuments:
    """The six result documents of one analysis (docs/reports.md names each file)."""

    anova: dict[str, Any]  #: anova.json
    #: comparisons.json (the analysis keeps its per-case rows as columns); None: not there
    comparisons: dict[str, Any] | None = None
    leaderboard: dict[str, Any] | None = None  #: leaderboard.json; None: not there
    #: thresholds.json ``results``; None (not there) and [] (no thresholds configured)
    #: render differently: report.json records which
    thresholds: list[dict[str, Any]] | None = None
    pairwise: dict[str, Any] | None = None  #: pairwise.json, when pairwise judges ran
    #: the report model (``build_report``) when already built, so the files, the console
    #: and the dashboard share one; None: the renderers build it from the documents
    report: dict[str, Any] | None = None
