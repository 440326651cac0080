"""Matplotlib figures to inline SVG that is safe, deterministic and theme-aware.

- Agg-free: figures are built with ``matplotlib.figure.Figure`` (no pyplot global state)
  and saved with the SVG backend; text stays text (``svg.fonttype: none``), so no font
  files are embedded or fetched.
- Safe: mathtext is off (``text.parse_math``) so ``$`` in a level name is literal;
  matplotlib XML-escapes text nodes and attributes; comments, the XML prolog, the
  DOCTYPE (which names a w3.org URL) and ``<metadata>`` are removed.
- Deterministic: fixed ``svg.hashsalt``, no date; element ids get a per-chart prefix so
  several charts can share one HTML page without id clashes.
- Theme-aware: text and axes are drawn in a sentinel colour replaced by ``currentColor``
  (and grid lines by ``var(--grid)``), so charts follow the page's light/dark colours.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

FG = "#0a0b0c"  # sentinel: becomes currentColor
GRID = "#0d0e0f"  # sentinel: becomes var(--grid)
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#8C8C00",
           "#999999"]  # Okabe & Ito (2008), readable on light and dark backgrounds
ACCENT = "#D55E00"

RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "eval_harness",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9.0,
    "text.color": FG,
    "axes.labelcolor": FG,
    "axes.edgecolor": FG,
    "axes.titlecolor": FG,
    "xtick.color": FG,
    "ytick.color": FG,
    "grid.color": GRID,
    "grid.linewidth": 0.6,
    "axes.grid": True,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
}

MUTED = "#999999"  # dominated / secondary points


@dataclass(frozen=True)
class Chart:
    """An inline ``<svg>`` and the caption notes that depend on the data (label legend,
    sort order, axis scale); the page adds them after the chart's fixed caption."""

    svg: str
    notes: list[str] = field(default_factory=list)


_REF = re.compile(r'(id="|href="#|#)([A-Za-z0-9_.:-]+)(?=[")])')
_ID_NAME = re.compile(r"[A-Za-z0-9_.:-]+")


def prefix_ids(text: str, prefix: str) -> str:
    """Every element id of ``text`` renamed ``<prefix>-<id>``, with its references
    (``href="#id"``, ``url(#id)``), so several charts can share a page.

    One regular-expression pass (one ``str.replace`` per id and reference form, as
    before, grew with ids × size: 15 interaction panels spent 0.4 s there); ids outside
    ``[A-Za-z0-9_.:-]`` (never written by matplotlib) take the replace loop."""
    ids = set(_ID.findall(text))
    if not all(_ID_NAME.fullmatch(i) for i in ids):
        for old in sorted(ids, key=len, reverse=True):
            new = f"{prefix}-{old}"
            text = text.replace(f'id="{old}"', f'id="{new}"').replace(f"#{old})", f"#{new})")
            text = text.replace(f'href="#{old}"', f'href="#{new}"')
        return text

    def rename(m: re.Match[str]) -> str:
        lead, name = m.group(1), m.group(2)
        end = text[m.end()]  # the lookahead's character
        if name not in ids or (end == ")") != (lead == "#"):
            return m.group(0)
        return f"{lead}{prefix}-{name}"

    return _REF.sub(rename, text)


_PROLOG = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->|<metadata>.*?</metadata>", re.S)
_ID = re.compile(r'\bid="([^"]+)"')


@contextmanager
def style() -> Iterator[None]:
    """The rcParams every chart is drawn under."""
    with mpl.rc_context(RC):  # type: ignore[arg-type]
        yield


def to_svg(fig: Figure, prefix: str, title: str) -> str:
    """Serialise ``fig`` to an inline-safe ``<svg>`` string (see module docstring)."""
    buf = io.StringIO()
    with style(), warnings.catch_warnings():
        # a label holding a control character from run data has no glyph: harmless, and
        # the warning would echo the raw character to the terminal
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        # No bbox_inches="tight": constrained layout already fits labels (and it would
        # draw the figure twice).
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = prefix_ids(_PROLOG.sub("", buf.getvalue()).strip(), prefix)
    text = text.replace(FG, "currentColor").replace(GRID, "var(--grid)")
    label = (title.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
             .replace(">", "&gt;"))
    return text.replace("<svg ", f'<svg role="img" aria-label="{label}" class="chart" ', 1)


def new_figure(width: float, height: float) -> Figure:
    """A Figure outside pyplot (no global state, thread-safe)."""
    with style():
        return Figure(figsize=(width, height), layout="constrained")


def short(text: object, limit: int = 40) -> str:
    """Label cut to ``limit`` characters (matplotlib escapes it when writing SVG)."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def err_bars(points: Sequence[tuple[Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Asymmetric error-bar lengths (mean − lo, hi − mean) for (mean, [lo, hi]) pairs;
    0 where the mean or either bound is missing."""
    lo = np.zeros(len(points))
    hi = np.zeros(len(points))
    for i, (mean, ci) in enumerate(points):
        if mean is None or not math.isfinite(mean) or not ci or ci[0] is None or ci[1] is None:
            continue
        lo[i], hi[i] = max(mean - ci[0], 0.0), max(ci[1] - mean, 0.0)
    return lo, hi
