"""The table value type shared by every renderer, and compact condition labels.

A :class:`TextTable` holds unescaped cell strings; each renderer escapes for its own
medium. :class:`Labels` gives each condition its compact label (level values only, in
matrix factor order, common level prefixes dropped: ``small · low · none``), its full
text (``model=example-small, effort=low, context=none (id …)``) and its number ``#``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eval_harness.reports import fmt


@dataclass
class TextTable:
    """A titled table; ``align`` holds "l" or "r" per column.

    ``priority`` ranks columns for narrow consoles: 0 is never hidden, larger numbers are
    hidden first (``console.fit_columns``). ``tips`` (per row, per cell) and
    ``column_tips`` carry the full text behind a compact cell (HTML ``title``).
    """

    key: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    align: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    empty: str = fmt.NOT_AVAILABLE
    priority: list[int] = field(default_factory=list)
    tips: list[list[str]] = field(default_factory=list)
    column_tips: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.align:
            self.align = ["l"] * len(self.columns)
        if not self.priority:
            self.priority = [0] * len(self.columns)

    def add(self, row: list[str], tips: dict[int, str] | None = None) -> None:
        """Append a row; ``tips`` maps a column index to that cell's full text."""
        self.rows.append(row)
        self.tips.append([(tips or {}).get(i, "") for i in range(len(row))])


def short_id(cid: Any) -> str:
    """The first 6 characters of a condition id."""
    return str(cid)[:6]


class Labels:
    """Compact condition labels (``small · low · none``) and their full text, by id."""

    def __init__(self, report: Mapping[str, Any]) -> None:
        self.display: Mapping[str, Mapping[str, str]] = report.get("level_display") or {}
        conds = report.get("conditions") or []
        self.short = {str(c["condition_id"]): str(c.get("short_label") or c.get("label")
                                                  or short_id(c["condition_id"])) for c in conds}
        self.full = {str(c["condition_id"]): f"{c.get('label')} (id {c['condition_id']})"
                     for c in conds}
        self.number = {str(c["condition_id"]): i for i, c in enumerate(conds, start=1)}

    def of(self, cid: Any, levels: Mapping[str, Any] | None = None,
           label: Any = None) -> tuple[str, str]:
        """(compact, full) for a condition id, else from its levels, else the label."""
        key = str(cid) if cid is not None else ""
        if key in self.short:
            return self.short[key], self.full[key]
        full = fmt.levels_label(levels, str(label or short_id(key)))
        return fmt.compact_label(levels, self.display, str(label or short_id(key))), full

    def level(self, factor: str, value: Any) -> str:
        """One factor level in compact form."""
        return self.display.get(factor, {}).get(str(value), str(value))
