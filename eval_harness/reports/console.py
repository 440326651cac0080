"""Console report (rich). Plain — no colour, ASCII-light boxes — when piped or under NO_COLOR."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from eval_harness._util.safe_text import safe_text
from eval_harness.reports import fmt
from eval_harness.reports.documents import AnalysisDocuments
from eval_harness.reports.report_model import build_report
from eval_harness.reports.tables import TextTable, all_tables

# Cell text → style, applied only on a colour terminal.
_STYLES = {
    "regressed": "bold red", "FAIL": "bold red", "improved": "green", "PASS": "green",
    "yes": "bold", "unchanged": "dim", "reference": "cyan", "leader": "cyan",
    "mixed": "yellow", "cases regressed": "yellow", "cases improved": "green",
}


def is_plain(console: Console) -> bool:
    """No colour and simple boxes: output is not a terminal, or NO_COLOR is set."""
    return (not console.is_terminal) or console.no_color or "NO_COLOR" in os.environ


def fit_columns(t: TextTable, width: int, gap: int, edge: int) -> list[int]:
    """Indices of the columns to show within ``width`` characters.

    Every cell is one unwrapped line, so a column needs its widest cell (header included);
    a table needs Σ widths + ``gap`` per column boundary + ``edge``. Columns are hidden in
    ``t.priority`` order (largest first, rightmost first among equals) until the rest fit;
    priority-0 columns always stay (a still-too-wide table then ellipsizes its labels).
    """
    need = [max([cell_len(t.columns[i]), *(cell_len(r[i]) for r in t.rows)])
            for i in range(len(t.columns))]
    keep = list(range(len(t.columns)))

    def total(cols: list[int]) -> int:
        return sum(need[i] for i in cols) + gap * max(len(cols) - 1, 0) + edge

    droppable = sorted((i for i in keep if t.priority[i] > 0),
                       key=lambda i: (t.priority[i], i), reverse=True)
    for i in droppable:
        if total(keep) <= width:
            break
        keep.remove(i)
    return keep


def _rich_table(t: TextTable, plain: bool, width: int) -> tuple[Table, list[str]]:
    """The rich table for ``t`` at ``width``, and the names of the columns it hides."""
    # Plain: no edges, a 2-space gutter; terminal: rounded box (3 characters per gutter).
    gap, edge = (2, 0) if plain else (3, 4)
    keep = fit_columns(t, width, gap, edge)
    if plain:
        table = Table(title=Text(t.title), box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      collapse_padding=True, title_justify="left", highlight=False)
    else:
        table = Table(title=Text(t.title), box=box.ROUNDED, title_justify="left", highlight=False)
    for i in keep:
        # One line per cell, always: a number is never split; an over-long label is
        # cut with "…" (its full text is in report.md / report.html).
        # headers and titles may hold user strings (levels, judge names): Text, never markup
        table.add_column(Text(t.columns[i]), justify="right" if t.align[i] == "r" else "left",
                         no_wrap=True, overflow="ellipsis",
                         min_width=min(cell_len(t.columns[i]), 12))
    for row in t.rows:
        # Text objects: user strings are never parsed as rich markup.
        table.add_row(*(Text(row[i], style="" if plain else _STYLES.get(row[i], ""))
                        for i in keep))
    return table, [t.columns[i] for i in range(len(t.columns)) if i not in keep]


def _note(console: Console, text: str, plain: bool) -> None:
    # Indented as a block, so a wrapped note stays visibly under its table.
    console.print(Padding(Text(text, style="" if plain else "dim"), (0, 0, 0, 2), expand=False))


def _make_safe(t: TextTable) -> None:
    """Control / bidi / zero-width characters in cells made visible: rich passes ESC
    through, so agent output could otherwise drive the reader's terminal (textsafe)."""
    t.title = safe_text(t.title, newlines=False)
    t.columns = [safe_text(c, newlines=False) for c in t.columns]
    t.rows = [[safe_text(c, newlines=False) for c in row] for row in t.rows]
    t.notes = [safe_text(n) for n in t.notes]
    t.empty = safe_text(t.empty)


def print_tables(console: Console, report: Mapping[str, Any], *, show_all_cases: bool = False) -> None:
    """Print the header, then every table with its notes (a dash line when empty)."""
    plain = is_plain(console)
    design = report.get("design") or {}
    head = (f"{safe_text(report.get('eval') or 'eval', newlines=False)}: {len(report.get('conditions') or [])} conditions × "
            f"{design.get('n_cases', '?')} cases × {design.get('replications', '?')} replications")
    console.print(Text(head, style="" if plain else "bold"))
    if report.get("pass_rule"):
        _note(console, f"pass rule: {safe_text(report['pass_rule'])}", plain)
    for line in report.get("data_notes") or []:
        _note(console, f"data: {safe_text(line)}", plain)
    for t in all_tables(report, show_all_cases=show_all_cases):
        _make_safe(t)
        if t.rows:
            table, hidden = _rich_table(t, plain, console.width)
            console.print(table)
            if hidden:
                _note(console, f"not shown at {console.width} columns: {', '.join(hidden)} "
                               "(see report.md)", plain)
        else:
            console.print(Text(f"{t.title}: {t.empty}", style="" if plain else "dim"))
        for note in t.notes:
            _note(console, note, plain)
        console.print()


def print_console(
    console: Console | None,
    docs: AnalysisDocuments,
    frame: pd.DataFrame,
    *,
    show_all_cases: bool = False,
) -> dict[str, Any]:
    """Print the console report of ``docs`` (``console`` None: stdout); return the report
    model it printed (reuse for files): ``docs.report`` when the caller already built it
    (``build_report``), else built here."""
    console = console or Console(highlight=False)
    report = docs.report if docs.report is not None else build_report(docs, frame)
    print_tables(console, report, show_all_cases=show_all_cases)
    if not report["anova"]["available"]:
        console.print(f"ANOVA: {fmt.NOT_AVAILABLE}")
    return report
