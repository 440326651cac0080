"""Cost (else p95 latency) against mean composite, with the Pareto frontier.

- Frontier conditions (``report.pareto.frontier``: no other condition is at most as costly
  and at least as good) are drawn in the accent colour, joined by the frontier's step
  line, and labelled with their compact labels; dominated ones are muted grey and left
  unlabelled (the Conditions table has them).
- Labels sit up-left of their point: by the frontier's definition no condition lies there
  (one would dominate the labelled point), nor does the step line. Where that spot is
  taken (or outside the axes), the first free one of down-right, up-right, down-left is
  used, else the label is pushed up past what it overlaps (:func:`place_labels`) and gets
  a thin leader line to its point.
- The x axis is logarithmic when the values span more than :data:`LOG_SPAN` × (costs of
  small and large models often differ by orders of magnitude).

The axes box is fixed in inches (no constrained layout) so label positions can be worked
out in points before drawing, without rendering the figure twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from eval_harness.reports.html import chart_labels as lb
from eval_harness.reports.html.svg import ACCENT, MUTED, Chart, err_bars, short, style, to_svg

LOG_SPAN = 10.0
MAX_LABELS = 15
LABEL_PT = 7.5  # label font size
CHAR_EM = 0.6  # average glyph width of DejaVu Sans in ems
W_IN, H_IN = 7.2, 4.4
MARGIN_IN = {"left": 0.75, "bottom": 0.55, "right": 0.25, "top": 0.4}
Box = tuple[float, float, float, float]  # left, bottom, right, top (points)


def _overlap(a: Box, b: Box, gap: float) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def _push_up(box: Box, placed: Sequence[Box], gap: float) -> Box:
    """``box`` moved up just above every placed box it overlaps, until it overlaps none."""
    left, bottom, right, top = box
    height = top - bottom
    moved = True
    while moved:
        moved = False
        for p in placed:
            if _overlap((left, bottom, right, bottom + height), p, gap):
                bottom = p[3] + gap
                moved = True
    return left, bottom, right, bottom + height


def place_labels(candidates: Sequence[Sequence[Box]], obstacles: Sequence[Box] = (),
                 bounds: Box | None = None, gap: float = 1.0) -> list[tuple[Box, bool]]:
    """Greedy label placement: each label (in the given order) takes its first candidate
    box that lies inside ``bounds`` and overlaps no obstacle and no label placed before;
    when none does, its first candidate is pushed up until it overlaps nothing (simple
    vertical de-overlap). Returns per label (box, moved?) — moved = the fallback was used
    (draw a leader line). O(labels × candidates × (labels + obstacles))."""
    placed: list[Box] = list(obstacles)
    out: list[tuple[Box, bool]] = []
    for cands in candidates:
        def inside(b: Box) -> bool:
            return bounds is None or (b[0] >= bounds[0] and b[1] >= bounds[1]
                                      and b[2] <= bounds[2] and b[3] <= bounds[3])
        free = next((b for b in cands if inside(b)
                     and not any(_overlap(b, p, gap) for p in placed)), None)
        box, moved = (free, False) if free is not None else (_push_up(cands[0], placed, gap),
                                                            True)
        placed.append(box)
        out.append((box, moved))
    return out


def _scale(xs: np.ndarray) -> tuple[bool, float, float]:
    """(log axis?, lower, upper limit in axis units: log10 when log)."""
    log = bool((xs > 0).all() and len(xs) > 1 and xs.max() / xs.min() > LOG_SPAN)
    u = np.log10(xs) if log else xs
    span = float(u.max() - u.min())
    pad = 0.08 * span if span > 0 else (0.5 if log else max(abs(float(u[0])) * 0.1, 1e-6))
    return log, float(u.min()) - pad, float(u.max()) + pad


def _tick_text(key: str) -> FuncFormatter:
    if key == "cost_mean_usd":
        return FuncFormatter(lambda v, _pos: f"${v:.4g}")
    return FuncFormatter(lambda v, _pos: f"{v:.4g} s")


def _place_labels(pts: list[tuple[float, float, str]], obstacles: Sequence[Box],
                  box_w: float, box_h: float) -> list[tuple[float, float, str, bool]]:
    """Per label at (x, y) points in the axes box: (x, y offset in points from its point
    to the label's lower-left corner, text, leader line?). Tried in turn: up-left (empty
    by the frontier's definition), down-right (under the step line), up-right, down-left;
    the fallback is up-left, kept inside the axes' left edge, pushed up."""
    h = LABEL_PT * 1.25
    cands = []
    for px, py, text in pts:
        w = len(text) * CHAR_EM * LABEL_PT + 2
        clamped = min(max(px - 5 - w, 0.0), max(box_w - w, 0.0))
        cands.append([(clamped, py + 3, clamped + w, py + 3 + h),
                      (px + 5, py - 3 - h, px + 5 + w, py - 3),
                      (px + 5, py + 3, px + 5 + w, py + 3 + h),
                      (px - 5 - w, py - 3 - h, px - 5, py - 3)])
    placed = place_labels(cands, obstacles, (0.0, 0.0, box_w, box_h))
    return [(b[0] - px, b[1] - py, text, moved)
            for (px, py, text), (b, moved) in zip(pts, placed, strict=True)]


def _obstacles(px: np.ndarray, py: np.ndarray, front: list[int]) -> list[Box]:
    """Every marker (±4 pt) and the frontier's step line (vertical and horizontal parts)."""
    out: list[Box] = [(x - 4, y - 4, x + 4, y + 4) for x, y in zip(px, py, strict=True)]
    for i, j in pairwise(front):
        out.append((px[i], py[i] - 1, px[j], py[i] + 1))
        out.append((px[j] - 1, py[i], px[j] + 1, py[j]))
    return out


def pareto_chart(report: Mapping[str, Any]) -> Chart | None:
    """The cost–quality chart (see module docstring), or None without an x quantity."""
    pareto = report.get("pareto") or {}
    key = str(pareto.get("x") or "")
    conds = [c for c in report.get("conditions") or []
             if key and c.get(key) is not None and c.get("mean") is not None]
    if not conds:
        return None
    disp = lb.display(report)
    front = set(pareto.get("frontier") or [])
    on = np.array([c["condition_id"] in front for c in conds])
    xs = np.array([c[key] for c in conds], dtype=float)
    ys = np.array([c["mean"] for c in conds], dtype=float)
    log, u0, u1 = _scale(xs)
    box_w = (W_IN - MARGIN_IN["left"] - MARGIN_IN["right"]) * 72
    box_h = (H_IN - MARGIN_IN["bottom"] - MARGIN_IN["top"]) * 72
    f_idx = [int(i) for i in np.argsort(xs, kind="stable") if on[i]]
    labelled = f_idx if len(f_idx) <= MAX_LABELS else []
    texts = [short(lb.condition_label(conds[i], disp), 60) for i in labelled]
    ux = np.log10(xs) if log else xs
    y_top = 1.02
    for _ in range(2):  # once more with headroom when labels were pushed above the axes
        px = (ux - u0) / (u1 - u0) * box_w
        py = (ys + 0.02) / (y_top + 0.02) * box_h
        pts = [(float(px[i]), float(py[i]), t) for i, t in zip(labelled, texts, strict=True)]
        placed = _place_labels(pts, _obstacles(px, py, f_idx), box_w, box_h)
        over = max((p[1] + d[1] + LABEL_PT * 1.25 for p, d in zip(pts, placed, strict=True)),
                   default=0.0) - box_h
        if over <= 0:
            break
        y_top += (over + 4) / box_h * (y_top + 0.02)
    with style():
        fig = Figure(figsize=(W_IN, H_IN))
        ax = fig.add_axes((MARGIN_IN["left"] / W_IN, MARGIN_IN["bottom"] / H_IN,
                           box_w / 72 / W_IN, box_h / 72 / H_IN))
        lo, hi = err_bars([(c["mean"], c.get("ci")) for c in conds])
        for mask, colour in ((~on, MUTED), (on, ACCENT)):
            if mask.any():
                ax.errorbar(xs[mask], ys[mask], yerr=np.vstack([lo[mask], hi[mask]]), fmt="none",
                            ecolor=colour, elinewidth=0.8, alpha=0.5)
        ax.scatter(xs[~on], ys[~on], color=MUTED, s=24, zorder=3)
        if f_idx:
            ax.step(xs[f_idx], ys[f_idx], where="post", color=ACCENT, lw=1.4)
            ax.scatter(xs[f_idx], ys[f_idx], color=ACCENT, s=34, zorder=4)
        for i, (dx, dy, text, leader) in zip(labelled, placed, strict=True):
            ax.annotate(text, (xs[i], ys[i]), xytext=(dx, dy), textcoords="offset points",
                        ha="left", va="bottom", fontsize=LABEL_PT, annotation_clip=False,
                        arrowprops={"arrowstyle": "-", "lw": 0.5, "color": MUTED,
                                    "shrinkA": 0, "shrinkB": 3} if leader else None)
        if log:
            ax.set_xscale("log")
            ax.set_xlim(10**u0, 10**u1)
            subs = (1.0, 2.0, 5.0) if u1 - u0 < 3 else (1.0,)
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_xlim(u0, u1)
        ax.xaxis.set_major_formatter(_tick_text(key))
        ax.set_xlabel(("mean cost per run (USD)" if key == "cost_mean_usd" else "p95 latency (s)")
                      + (", log scale" if log else ""))
        ax.set_ylabel("mean composite (95% CI)")
        ax.set_ylim(-0.02, y_top)
        handles = [Line2D([], [], color=ACCENT, marker="o", lw=1.4, label="Pareto frontier")]
        if (~on).any():
            handles.append(Line2D([], [], color=MUTED, marker="o", lw=0, label="dominated"))
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2,
                  fontsize=8, borderaxespad=0.2)
        svg = to_svg(fig, "pareto", "Cost against quality with the Pareto frontier")
    notes = ["only frontier conditions are labelled" if labelled else
             f"{int(on.sum())} frontier conditions: too many to label, see the Conditions table"]
    notes += lb.label_notes(report, disp)
    if log:
        notes.append(f"x axis logarithmic (values span {xs.max() / xs.min():.0f}×)")
    return Chart(svg, notes)
