"""reports stage: console (rich), Markdown, JSON and single-file HTML reports.

Public API (the pipeline calls these); ``docs`` is one ``AnalysisDocuments`` (anova.json,
comparisons, leaderboard, thresholds, pairwise and, when already built, the report model):

- ``write_reports(out_dir, docs, frame, *, runs_root=None, formats=("md", "json", "html"),
  generated_at=None)`` → {format: path} of report.md / report.json / report.html;
- ``print_console(console, docs, frame, *, show_all_cases=False)`` → the report model;
- ``build_report(docs, frame, *, generated_at=None, title=None, tables=None)`` → the report
  model (the JSON report's content).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AnalysisDocuments", "build_report", "print_console", "write_reports"]

_HOMES = {"print_console": "console", "build_report": "report_model",
          "write_reports": "report_files", "AnalysisDocuments": "documents"}


def __getattr__(name: str) -> Any:
    # Lazy: importing the package (e.g. for dry_run_view) must not pull in pandas/scipy.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"eval_harness.reports.{_HOMES[name]}"), name)
    raise AttributeError(name)
