"""Case × condition heatmap of the mean composite.

- Rows: cases sorted by their mean composite across conditions, hardest at the top (ties
  by case id), so easy and hard cases form bands and a column that breaks a band stands
  out. Above :data:`MAX_CASES` cases, the first ones of ``case_grid`` are kept (cases whose
  verdict differs between conditions first, as the tables show them).
- Columns: conditions in matrix order (first factor slowest), labelled with their compact
  levels stacked one factor per line and read horizontally, factor names to the left;
  when that would not fit, one rotated compact label per column.
- Cells: colour = mean composite (viridis, 0–1). Small grids (≤ :data:`ANNOTATE_MAX`) also
  print ``passes/attempts`` (``~`` flaky, ``!`` some attempts errored, ``E`` none usable)
  in black or white, whichever contrasts more with the cell (WCAG relative luminance).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib import colormaps

from eval_harness.reports.fmt import cell_text
from eval_harness.reports.html import chart_labels as lb
from eval_harness.reports.html.svg import FG, Chart, new_figure, short, style, to_svg

MAX_CASES = 60
ANNOTATE_MAX = (40, 12)  # (cases, conditions) up to which cells carry passes/attempts
MAX_WIDTH_IN = 11.0
TICK_PT = 8.0  # column label font size (points)
CHAR_EM = 0.62  # average glyph width of DejaVu Sans, in ems (digits and lower case)


def _luminance(rgba: Sequence[float]) -> float:
    """WCAG 2 relative luminance: L = 0.2126 R + 0.7152 G + 0.0722 B of linearised sRGB."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_colour(rgba: Sequence[float]) -> str:
    """Black or white, whichever has the higher contrast ratio (L1 + 0.05) / (L2 + 0.05)
    with the cell; the two tie at L ≈ 0.179."""
    return "#000000" if _luminance(rgba) > 0.179 else "#ffffff"


def _row_mean(row: Mapping[str, Any], cids: Sequence[str]) -> float:
    vals = [(row["cells"].get(c) or {}).get("composite") for c in cids]
    nums = [v for v in vals if v is not None]
    return float(np.mean(nums)) if nums else np.nan


def _width_in(chars: int, pt: float = TICK_PT) -> float:
    return chars * CHAR_EM * pt / 72


def heatmap_chart(report: Mapping[str, Any]) -> Chart | None:
    """The heatmap (see module docstring), or None without cases or conditions."""
    grid = report.get("case_grid") or {}
    conds = lb.in_matrix_order(report, report.get("conditions") or [])
    every = list(grid.get("cases") or [])
    if not every or not conds:
        return None
    cids = [str(c["condition_id"]) for c in conds]
    means = {r["case_id"]: _row_mean(r, cids) for r in every[:MAX_CASES]}
    cases = sorted(every[:MAX_CASES], key=lambda r: (np.isnan(means[r["case_id"]]),
                                                     means[r["case_id"]], r["case_id"]))
    z = np.array([[np.nan if (r["cells"].get(c) or {}).get("composite") is None
                   else r["cells"][c]["composite"] for c in cids] for r in cases], dtype=float)
    disp = lb.display(report)
    factors = list(lb.matrix_levels(report))
    parts = [[lb.level_text(disp, f, (c.get("levels") or {}).get(f, "")) for f in factors]
             if c.get("levels") else [lb.condition_label(c, disp)] for c in conds]
    annotate = len(cases) <= ANNOTATE_MAX[0] and len(cids) <= ANNOTATE_MAX[1]
    left = _width_in(min(max(len(str(r["case_id"])) for r in cases), 28)) + 0.5
    fixed = left + 1.1  # row labels + colour bar
    col = max(_width_in(max(len(p) for ps in parts for p in ps)) + 0.12, 0.6 if annotate else 0.3)
    stacked = fixed + col * len(cids) <= MAX_WIDTH_IN
    if not stacked:
        col = max((MAX_WIDTH_IN - fixed) / len(cids), 0.16)
    header = len(factors) * TICK_PT * 1.25 / 72 if stacked else _width_in(
        max(len(lb.condition_label(c, disp)) for c in conds))
    with style():
        fig = new_figure(min(fixed + col * len(cids), MAX_WIDTH_IN),
                         1.0 + header + max(0.26 * len(cases), 1.6))
        ax = fig.add_subplot()
        cmap = colormaps["viridis"]
        img = ax.imshow(np.ma.masked_invalid(z), aspect="auto", cmap=cmap, vmin=0, vmax=1,
                        interpolation="none")  # unsampled: no raster at figure dpi
        ax.grid(False)
        ax.set_yticks(range(len(cases)), [short(r["case_id"], 28) for r in cases])
        if stacked:
            ax.set_xticks(range(len(cids)), ["\n".join(p) for p in parts], fontsize=TICK_PT)
            if len(factors) > 1:
                # Factor names left of the stacked levels, on the same lines (same font
                # size, line spacing and top offset = tick length + pad).
                off = -(float(mpl.rcParams["xtick.major.size"])
                        + float(mpl.rcParams["xtick.major.pad"]))
                ax.annotate("\n".join(short(f, 20) for f in factors), xy=(-0.5, 0),
                            xycoords=("data", "axes fraction"), xytext=(-4, off),
                            textcoords="offset points", ha="right", va="top", fontsize=TICK_PT,
                            fontstyle="italic", annotation_clip=False)
            elif factors:
                ax.set_xlabel(short(factors[0], 30))
        else:
            ax.set_xticks(range(len(cids)), [lb.condition_label(c, disp) for c in conds],
                          rotation=90 if len(cids) > 16 else 45, ha="right",
                          rotation_mode="anchor", fontsize=TICK_PT)
        if annotate:
            size = 7.5 if col >= 0.55 else 6.5
            for i, r in enumerate(cases):
                for j, c in enumerate(cids):
                    text = cell_text(r["cells"].get(c))
                    if text:
                        colour = FG if np.isnan(z[i, j]) else text_colour(cmap(z[i, j]))
                        ax.text(j, i, text, ha="center", va="center", fontsize=size,
                                color=colour)
        fig.colorbar(img, ax=ax, label="mean composite", shrink=0.8)
        svg = to_svg(fig, "heat", "Case by condition heatmap of the mean composite")
    notes = ["rows: cases by mean composite across conditions, hardest at the top; "
             "columns: conditions in matrix order"]
    if len(every) > len(cases):
        notes.append(f"showing {len(cases)} of {len(every)} cases (those whose verdict differs "
                     "between conditions first); the All cases table lists every case")
    if annotate:
        notes.append("text: passes/attempts (~ flaky, ! some attempts errored, E errored)")
    note = lb.prefix_note(disp)
    return Chart(svg, [*notes, note] if note else notes)
