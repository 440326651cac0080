"""Console report (rich). Plain — no colour, ASCII-light boxes — when piped or under NO_COLOR."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from eval_harness.reports import fmt
from eval_harness.reports.model import build_report
from eval_harness.reports.tables import TextTable, all_tables

# Cell text → style, applied only on a colour terminal.
_STYLES = {
    "regressed": "bold red", "FAIL": "bold red", "improved": "green", "PASS": "green",
    "yes": "bold", "unchanged": "dim", "reference": "cyan", "leader": "cyan",
}


def is_plain(console: Console) -> bool:
    """No colour and simple boxes: output is not a terminal, or NO_COLOR is set."""
    return (not console.is_terminal) or console.no_color or "NO_COLOR" in os.environ


def _rich_table(t: TextTable, plain: bool) -> Table:
    table = Table(title=t.title, box=box.SIMPLE_HEAD if plain else box.ROUNDED,
                  title_justify="left", show_lines=False, highlight=False)
    for name, al in zip(t.columns, t.align, strict=True):
        table.add_column(name, justify="right" if al == "r" else "left", overflow="fold")
    for row in t.rows:
        # Text objects: user strings are never parsed as rich markup.
        table.add_row(*(Text(cell, style="" if plain else _STYLES.get(cell, "")) for cell in row))
    return table


def print_tables(console: Console, report: Mapping[str, Any], *, show_all_cases: bool = False) -> None:
    """Print the header, then every table with its notes (a dash line when empty)."""
    plain = is_plain(console)
    design = report.get("design") or {}
    head = (f"{report.get('eval') or 'eval'}: {len(report.get('conditions') or [])} conditions × "
            f"{design.get('n_cases', '?')} cases × {design.get('replications', '?')} replications")
    console.print(Text(head, style="" if plain else "bold"))
    for t in all_tables(report, show_all_cases=show_all_cases):
        if t.rows:
            console.print(_rich_table(t, plain))
        else:
            console.print(Text(f"{t.title}: {t.empty}", style="" if plain else "dim"))
        for note in t.notes:
            console.print(Text(f"  {note}", style="" if plain else "dim"))
        console.print()


def print_console(
    console: Console | None = None,
    *,
    anova: Mapping[str, Any],
    frame: pd.DataFrame,
    comparisons: Mapping[str, Any] | None = None,
    leaderboard: Mapping[str, Any] | None = None,
    thresholds: list[dict[str, Any]] | None = None,
    pairwise: Mapping[str, Any] | None = None,
    show_all_cases: bool = False,
) -> dict[str, Any]:
    """Print the console report; return the report model it printed (reuse for files)."""
    console = console or Console(highlight=False)
    report = build_report(anova=anova, frame=frame, comparisons=comparisons,
                          leaderboard=leaderboard, thresholds=thresholds, pairwise=pairwise)
    print_tables(console, report, show_all_cases=show_all_cases)
    if not report["anova"]["available"]:
        console.print(f"ANOVA: {fmt.NOT_AVAILABLE}")
    return report
