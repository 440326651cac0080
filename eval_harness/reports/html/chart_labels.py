"""Chart labels and orders shared by every chart: compact condition labels, levels in
matrix order, and the caption notes that make compact labels unambiguous.

Compact labels are the console's (``fmt.compact_label`` / ``fmt.level_display``): level
values only, in matrix factor order, each factor's common prefix dropped — e.g.
``large · high · docs`` for ``model=example-large, effort=high, context=docs``. The caption
names the factor order once (``labels: model · effort · context``) and each dropped prefix
once (``model 'example-'``).

Matrix order is ``design.factors`` (anova.json: factor → levels as declared in the eval
matrix); without it, the order in which levels first appear among the conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eval_harness.reports import fmt


def matrix_levels(report: Mapping[str, Any]) -> dict[str, list[str]]:
    """Factor → level names (as text) in matrix order."""
    declared = (report.get("design") or {}).get("factors") or {}
    factors = [str(f) for f in (report.get("factors") or list(declared))]
    out: dict[str, list[str]] = {f: [str(v) for v in declared.get(f) or []] for f in factors}
    # Levels seen in the data but not declared (older anova.json) go last, in data order.
    for c in report.get("conditions") or []:
        for f, v in (c.get("levels") or {}).items():
            seen = out.setdefault(str(f), [])
            if str(v) not in seen:
                seen.append(str(v))
    return out


def display(report: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Factor → {level → compact text}: the report's ``level_display``, else computed."""
    given = report.get("level_display")
    if isinstance(given, Mapping) and given:
        return {str(f): {str(k): str(v) for k, v in m.items()} for f, m in given.items()}
    return fmt.level_display(matrix_levels(report))


def level_text(disp: Mapping[str, Mapping[str, str]], factor: str, value: Any) -> str:
    """Compact text of one level (its full name when the factor has no compact form)."""
    return disp.get(factor, {}).get(str(value), str(value))


def condition_label(cond: Mapping[str, Any], disp: Mapping[str, Mapping[str, str]]) -> str:
    """``large · high · docs``: the condition's ``short_label``, else computed."""
    given = cond.get("short_label")
    if given:
        return str(given)
    return fmt.compact_label(cond.get("levels"), disp, str(cond.get("condition_id", ""))[:6])


def level_rank(order: Mapping[str, Sequence[str]], factor: str, value: Any) -> int:
    """Position of a level in matrix order (unknown levels last)."""
    names = list(order.get(factor) or [])
    return names.index(str(value)) if str(value) in names else len(names)


def in_matrix_order(report: Mapping[str, Any],
                    conds: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Conditions sorted as the matrix enumerates them (first factor slowest)."""
    order = matrix_levels(report)

    def key(c: Mapping[str, Any]) -> tuple[int, ...]:
        lv = c.get("levels") or {}
        return tuple(level_rank(order, f, lv.get(f)) for f in order)

    return sorted(conds, key=key)


def prefix_note(disp: Mapping[str, Mapping[str, str]],
                factors: Sequence[str] | None = None) -> str:
    """``levels shown without their common prefix: model 'example-'`` (empty when none)."""
    cut: dict[tuple[str, str], None] = {}
    for f, m in disp.items():
        if factors is not None and f not in factors:
            continue
        for full, short in m.items():
            if full != short and full.endswith(short):
                cut[(f, full[: len(full) - len(short)])] = None
    if not cut:
        return ""
    return "levels shown without their common prefix: " + ", ".join(f"{f} {p!r}" for f, p in cut)


def label_notes(report: Mapping[str, Any], disp: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Caption notes for charts labelled by condition: the factor order, dropped prefixes."""
    factors = list(matrix_levels(report))
    notes = [f"labels: {fmt.COMPACT_SEP.join(factors)}"] if len(factors) > 1 else []
    note = prefix_note(disp)
    return [*notes, note] if note else notes
