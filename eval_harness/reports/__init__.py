"""reports stage: console (rich), Markdown, JSON and single-file HTML reports.

Public API (the pipeline calls these):

- ``write_reports(out_dir, *, anova, frame, comparisons=None, leaderboard=None,
  thresholds=None, pairwise=None, runs_root=None, formats=("md", "json", "html"))``
  → {format: path} of report.md / report.json / report.html;
- ``print_console(console, *, anova, frame, comparisons=None, ...)`` → the report model;
- ``build_report(...)`` → the report model (the JSON report's content).
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_report", "print_console", "write_reports"]

_HOMES = {"print_console": "console", "build_report": "report_model",
          "write_reports": "report_files"}


def __getattr__(name: str) -> Any:
    # Lazy: importing the package (e.g. for dry_run_view) must not pull in pandas/scipy.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"eval_harness.reports.{_HOMES[name]}"), name)
    raise AttributeError(name)
