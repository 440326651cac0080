"""The report's charts (matplotlib → inline SVG). Each returns a :class:`~svg.Chart` (the
``<svg>`` plus data-dependent caption notes), or ``None`` when the data cannot support
the chart (the page then says "not available").

All read only the report model (``reports.report_model.build_report``). Conditions are named by
their compact labels (``large · high · docs``, see ``html.chart_labels``); factor levels appear
in matrix order (``design.factors``), never sorted by value, so a reader finds a level in
the same place in every panel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from eval_harness.reports.html import chart_labels as lb
from eval_harness.reports.html.chart_heatmap import heatmap_chart
from eval_harness.reports.html.chart_pareto import pareto_chart
from eval_harness.reports.html.svg import (
    ACCENT,
    PALETTE,
    Chart,
    err_bars,
    new_figure,
    short,
    style,
    to_svg,
)

__all__ = ["all_charts", "heatmap_chart", "interaction_chart", "main_effects_chart",
           "means_chart", "pareto_chart"]


def _level_ticks(ax: Axes, names: list[str], panel_in: float) -> None:
    """Level names as x ticks: horizontal when they fit their share of the panel's width
    (estimated at 0.6 em per character, 9 pt), else tilted 30°."""
    fits = max((len(n) for n in names), default=0) * 0.6 * 9 / 72 <= 0.85 * panel_in / max(
        len(names), 1)
    ax.set_xticks(range(len(names)), names, rotation=0 if fits else 30,
                  ha="center" if fits else "right", rotation_mode="default" if fits else "anchor")


def _by_level(rows: list[dict[str, Any]], order: Mapping[str, list[str]],
              factor: str) -> list[dict[str, Any]]:
    """Marginal-mean rows sorted by the factor's level in matrix order."""
    return sorted(rows, key=lambda r: lb.level_rank(order, factor, r["levels"][factor]))


def means_chart(report: Mapping[str, Any]) -> Chart | None:
    """Dot-and-interval: mean composite with its 95% CI per condition, best at the top;
    the reference condition (comparisons.json) in the accent colour."""
    conds = [c for c in report.get("conditions") or [] if c.get("mean") is not None]
    if not conds:
        return None
    disp = lb.display(report)
    conds.sort(key=lambda c: (c["mean"], lb.condition_label(c, disp)))
    ref = next((c for c in conds if c.get("is_reference")), None)
    with style():
        fig = new_figure(7.2, 1.1 + 0.27 * len(conds))
        ax = fig.add_subplot()
        y = np.arange(len(conds))
        lo, hi = err_bars([(c["mean"], c.get("ci")) for c in conds])
        colors = [ACCENT if c.get("is_reference") else PALETTE[0] for c in conds]
        means = np.array([c["mean"] for c in conds], dtype=float)
        ax.hlines(y, means - lo, means + hi, colors=colors, linewidth=1.6)
        ax.scatter(means, y, color=colors, s=28, zorder=3)
        ax.set_yticks(y, [short(lb.condition_label(c, disp), 60) for c in conds])
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("mean composite (95% CI over cases)")
        ax.grid(axis="y", visible=False)
        if ref is not None:
            handles = [Line2D([], [], color=PALETTE[0], marker="o", lw=1.6, label="condition"),
                       Line2D([], [], color=ACCENT, marker="o", lw=1.6,
                              label=f"reference: {short(lb.condition_label(ref, disp), 40)}")]
            fig.legend(handles=handles, loc="outside upper right", ncols=2, fontsize=8)
        notes = lb.label_notes(report, disp)
        if ref is not None:
            notes.append(f"orange: the reference condition ({lb.condition_label(ref, disp)})")
        return Chart(to_svg(fig, "means", "Mean composite per condition with 95% CIs"), notes)


def _panels(n: int, max_cols: int, col_width: float, row_height: float) -> tuple[Any, Any]:
    """A figure of ``n`` panels sharing the y axis, at most ``max_cols`` a row (call inside
    ``style()``): (figure, 2-D array of axes; the ones past ``n`` are for the caller to hide)."""
    cols = min(n, max_cols)
    nrows = math.ceil(n / cols)
    fig = new_figure(min(col_width * cols + 0.6, 10.5), row_height * nrows)
    return fig, fig.subplots(nrows, cols, squeeze=False, sharey=True)


def main_effects_chart(report: Mapping[str, Any]) -> Chart | None:
    """One panel per factor: marginal mean composite per level (matrix order), 95% CIs."""
    effects = {f: rows for f, rows in (report.get("main_effects") or {}).items() if rows}
    if not effects:
        return None
    order = lb.matrix_levels(report)
    disp = lb.display(report)
    n = len(effects)
    with style():
        fig, axes = _panels(n, 4, 2.6, 2.7)
        for ax, (factor, rows) in zip(axes.flat, effects.items(), strict=False):
            rows = _by_level(rows, order, factor)
            x = np.arange(len(rows))
            means = np.array([np.nan if r["mean"] is None else r["mean"] for r in rows], float)
            lo, hi = err_bars([(m, r.get("ci")) for m, r in zip(means, rows, strict=True)])
            ax.errorbar(x, means, yerr=np.vstack([lo, hi]), fmt="-o", color=PALETTE[0],
                        capsize=3, ms=5)
            names = [short(lb.level_text(disp, factor, r["levels"][factor]), 24) for r in rows]
            _level_ticks(ax, names, 2.6)
            ax.set_title(short(factor, 30))
            ax.set_xlim(-0.5, len(rows) - 0.5)
            ax.set_ylim(-0.02, 1.02)
            ax.set_yticks(np.linspace(0, 1, 6))
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        axes[0][0].set_ylabel("mean composite")
        note = lb.prefix_note(disp, list(effects))
        return Chart(to_svg(fig, "main", "Main effects: marginal means per factor level"),
                     [note] if note else [])


def interaction_chart(report: Mapping[str, Any]) -> Chart | None:
    """One panel per pair of factors (A:B): x = levels of A, one line per level of B,
    both in matrix order."""
    pairs = {k: v for k, v in (report.get("interactions") or {}).items() if v}
    if not pairs:
        return None
    order = lb.matrix_levels(report)
    disp = lb.display(report)
    n = len(pairs)
    used: list[str] = []
    with style():
        fig, axes = _panels(n, 3, 3.4, 3.0)
        for ax, (term, rows) in zip(axes.flat, pairs.items(), strict=False):
            a, b = term.split(":", 1)
            used += [a, b]
            a_levels = order.get(a) or [str(v) for v in dict.fromkeys(r["levels"][a] for r in rows)]
            b_levels = order.get(b) or [str(v) for v in dict.fromkeys(r["levels"][b] for r in rows)]
            width = 0.12 * (len(b_levels) - 1)
            for j, bl in enumerate(b_levels):
                sub = [r for r in rows if str(r["levels"][b]) == bl and r["mean"] is not None]
                sub = _by_level(sub, order, a)
                if not sub:
                    continue
                dodge = (j / max(len(b_levels) - 1, 1) - 0.5) * width
                x = np.array([lb.level_rank(order, a, r["levels"][a]) for r in sub]) + dodge
                lo, hi = err_bars([(r["mean"], r.get("ci")) for r in sub])
                ax.errorbar(x, [r["mean"] for r in sub], yerr=np.vstack([lo, hi]), fmt="-o",
                            ms=4, capsize=2, color=PALETTE[j % len(PALETTE)],
                            label=short(lb.level_text(disp, b, bl), 18))
            _level_ticks(ax, [short(lb.level_text(disp, a, v), 24) for v in a_levels], 3.4)
            ax.set_xlabel(short(a, 30))
            ax.set_title(short(f"{a} × {b}", 40))
            ax.set_ylim(-0.02, 1.02)
            ax.set_yticks(np.linspace(0, 1, 6))
            if ax.get_legend_handles_labels()[0]:  # nothing to label when no cell has data
                ax.legend(title=short(b, 24), fontsize=8, title_fontsize=8, loc="best")
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        axes[0][0].set_ylabel("mean composite")
        note = lb.prefix_note(disp, used)
        return Chart(to_svg(fig, "inter", "Interaction plots for each pair of factors"),
                     [note] if note else [])


def all_charts(report: Mapping[str, Any]) -> dict[str, Chart | None]:
    """Every chart by key (None = not available)."""
    return {
        "means": means_chart(report),
        "main_effects": main_effects_chart(report),
        "interactions": interaction_chart(report),
        "heatmap": heatmap_chart(report),
        "pareto": pareto_chart(report),
    }
