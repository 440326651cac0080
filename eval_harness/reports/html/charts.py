"""The report's charts (matplotlib → inline SVG). Each returns an ``<svg>`` string, or
``None`` when the data cannot support the chart (the page then says "not available").

All read only the report model (``reports.model.build_report``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from eval_harness.reports.html.svg import ACCENT, PALETTE, new_figure, short, style, to_svg

MAX_HEATMAP_CASES = 60


def _err(mean: float, ci: Any) -> tuple[float, float]:
    """Asymmetric error-bar lengths (0 where the CI is missing)."""
    if not ci or ci[0] is None or ci[1] is None:
        return 0.0, 0.0
    return max(mean - ci[0], 0.0), max(ci[1] - mean, 0.0)


def means_chart(report: Mapping[str, Any]) -> str | None:
    """Dot-and-interval: mean composite with its 95% CI per condition, best at the top."""
    conds = [c for c in report.get("conditions") or [] if c.get("mean") is not None]
    if not conds:
        return None
    conds.sort(key=lambda c: (c["mean"], c["label"]))
    with style():
        fig = new_figure(7.2, 0.9 + 0.27 * len(conds))
        ax = fig.add_subplot()
        y = np.arange(len(conds))
        errs = np.array([_err(c["mean"], c.get("ci")) for c in conds]).T
        colors = [ACCENT if c.get("is_reference") else PALETTE[0] for c in conds]
        ax.hlines(y, [c["mean"] - e for c, e in zip(conds, errs[0], strict=True)],
                  [c["mean"] + e for c, e in zip(conds, errs[1], strict=True)], colors=colors,
                  linewidth=1.6)
        ax.scatter([c["mean"] for c in conds], y, color=colors, s=28, zorder=3)
        ax.set_yticks(y, [short(c["label"], 48) + (" (ref)" if c.get("is_reference") else "")
                          for c in conds])
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("mean composite (95% CI over cases)")
        ax.grid(axis="y", visible=False)
        return to_svg(fig, "means", "Mean composite per condition with 95% CIs")


def _level_index(levels: list[Any], value: Any) -> int:
    names = [str(v) for v in levels]
    return names.index(str(value)) if str(value) in names else len(names)


def main_effects_chart(report: Mapping[str, Any]) -> str | None:
    """One panel per factor: marginal mean composite per level with 95% CIs."""
    effects = {f: rows for f, rows in (report.get("main_effects") or {}).items() if rows}
    if not effects:
        return None
    n = len(effects)
    cols = min(n, 4)
    nrows = math.ceil(n / cols)
    with style():
        fig = new_figure(min(2.6 * cols + 0.6, 10.5), 2.7 * nrows)
        axes = fig.subplots(nrows, cols, squeeze=False, sharey=True)
        for ax, (factor, rows) in zip(axes.flat, effects.items(), strict=False):
            x = np.arange(len(rows))
            means = [r["mean"] if r["mean"] is not None else np.nan for r in rows]
            errs = np.array([_err(m, r.get("ci")) if np.isfinite(m) else (0, 0)
                             for m, r in zip(means, rows, strict=True)]).T
            ax.errorbar(x, means, yerr=errs, fmt="-o", color=PALETTE[0], capsize=3, ms=5)
            ax.set_xticks(x, [short(r["levels"][factor], 18) for r in rows],
                          rotation=30 if len(rows) > 3 else 0, ha="right" if len(rows) > 3 else "center")
            ax.set_title(short(factor, 30))
            ax.set_xlim(-0.5, len(rows) - 0.5)
            ax.set_ylim(-0.02, 1.02)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        axes[0][0].set_ylabel("mean composite")
        return to_svg(fig, "main", "Main effects: marginal means per factor level")


def interaction_chart(report: Mapping[str, Any]) -> str | None:
    """One panel per pair of factors (A:B): x = levels of A, one line per level of B."""
    pairs = {k: v for k, v in (report.get("interactions") or {}).items() if v}
    if not pairs:
        return None
    order = (report.get("design") or {}).get("factors") or {}
    n = len(pairs)
    cols = min(n, 3)
    nrows = math.ceil(n / cols)
    with style():
        fig = new_figure(min(3.4 * cols + 0.6, 10.5), 3.0 * nrows)
        axes = fig.subplots(nrows, cols, squeeze=False, sharey=True)
        for ax, (term, rows) in zip(axes.flat, pairs.items(), strict=False):
            a, b = term.split(":", 1)
            a_levels = list(order.get(a) or dict.fromkeys(r["levels"][a] for r in rows))
            b_levels = list(order.get(b) or dict.fromkeys(r["levels"][b] for r in rows))
            width = 0.12 * (len(b_levels) - 1)
            for j, bl in enumerate(b_levels):
                sub = [r for r in rows if str(r["levels"][b]) == str(bl) and r["mean"] is not None]
                sub.sort(key=lambda r: _level_index(a_levels, r["levels"][a]))
                if not sub:
                    continue
                dodge = (j / max(len(b_levels) - 1, 1) - 0.5) * width
                x = np.array([_level_index(a_levels, r["levels"][a]) for r in sub]) + dodge
                errs = np.array([_err(r["mean"], r.get("ci")) for r in sub]).T
                ax.errorbar(x, [r["mean"] for r in sub], yerr=errs, fmt="-o", ms=4, capsize=2,
                            color=PALETTE[j % len(PALETTE)], label=short(bl, 18))
            ax.set_xticks(range(len(a_levels)), [short(v, 16) for v in a_levels])
            ax.set_xlabel(short(a, 30))
            ax.set_title(short(f"{a} × {b}", 40))
            ax.set_ylim(-0.02, 1.02)
            ax.legend(title=short(b, 24), fontsize=8, title_fontsize=8, loc="best")
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        axes[0][0].set_ylabel("mean composite")
        return to_svg(fig, "inter", "Interaction plots for each pair of factors")


def heatmap_chart(report: Mapping[str, Any]) -> str | None:
    """Case × condition mean composite; differing cases first, hardest first (≤ 60 cases)."""
    grid = report.get("case_grid") or {}
    conds = report.get("conditions") or []
    cases = list(grid.get("cases") or [])[:MAX_HEATMAP_CASES]
    if not cases or not conds:
        return None
    cids = [c["condition_id"] for c in conds]
    z = np.array([[((r["cells"].get(c) or {}).get("composite") if (r["cells"].get(c) or {})
                    .get("composite") is not None else np.nan) for c in cids] for r in cases],
                 dtype=float)
    with style():
        fig = new_figure(min(3.0 + 0.75 * len(cids), 11.0), 2.2 + 0.26 * len(cases))
        ax = fig.add_subplot()
        img = ax.imshow(np.ma.masked_invalid(z), aspect="auto", cmap="viridis", vmin=0, vmax=1,
                        interpolation="nearest")
        ax.grid(False)
        ax.set_yticks(range(len(cases)), [short(r["case_id"], 28) for r in cases])
        ax.set_xticks(range(len(cids)), [short(c["label"], 28) for c in conds], rotation=60,
                      ha="right", rotation_mode="anchor")
        if len(cids) <= 12 and len(cases) <= 30:
            for i, r in enumerate(cases):
                for j, c in enumerate(cids):
                    cell = r["cells"].get(c)
                    if cell:
                        ax.text(j, i, _cell(cell), ha="center", va="center", fontsize=7,
                                color="white" if (np.isnan(z[i, j]) or z[i, j] < 0.55) else "black")
        fig.colorbar(img, ax=ax, label="mean composite", shrink=0.8)
        return to_svg(fig, "heat", "Case by condition heatmap of the mean composite")


def _cell(cell: Mapping[str, Any]) -> str:
    if cell.get("verdict") == "errored":
        return "E"
    return f"{cell['passes']}/{cell['attempts']}" + ("~" if cell.get("verdict") == "flaky" else "")


def pareto_chart(report: Mapping[str, Any]) -> str | None:
    """Cost (else p95 latency) against mean composite, with the Pareto frontier."""
    pareto = report.get("pareto") or {}
    key = pareto.get("x")
    conds = [c for c in report.get("conditions") or []
             if key and c.get(key) is not None and c.get("mean") is not None]
    if not conds:
        return None
    front = set(pareto.get("frontier") or [])
    xs = np.array([c[key] for c in conds], dtype=float)
    with style():
        fig = new_figure(7.2, 4.2)
        ax = fig.add_subplot()
        errs = np.array([_err(c["mean"], c.get("ci")) for c in conds]).T
        on = np.array([c["condition_id"] in front for c in conds])
        ax.errorbar(xs, [c["mean"] for c in conds], yerr=errs, fmt="none", ecolor=PALETTE[7],
                    elinewidth=0.8, alpha=0.7)
        if (~on).any():
            ax.scatter(xs[~on], [c["mean"] for c, o in zip(conds, on, strict=True) if not o],
                       color=PALETTE[0], s=26, zorder=3, label="dominated")
        f_pts = sorted((c[key], c["mean"]) for c in conds if c["condition_id"] in front)
        if f_pts:
            ax.step([p[0] for p in f_pts], [p[1] for p in f_pts], where="post", color=ACCENT,
                    lw=1.4, label="Pareto frontier")
            ax.scatter([p[0] for p in f_pts], [p[1] for p in f_pts], color=ACCENT, s=34, zorder=4)
        if len(conds) <= 12:
            for c in conds:
                ax.annotate(short(c["label"], 30), (c[key], c["mean"]), fontsize=7,
                            xytext=(4, 4), textcoords="offset points")
        positive = xs[xs > 0]
        if len(positive) == len(xs) and len(xs) > 1 and xs.max() / xs.min() > 20:
            ax.set_xscale("log")
        ax.set_xlabel("mean cost per run (USD)" if key == "cost_mean_usd" else "p95 latency (s)")
        ax.set_ylabel("mean composite (95% CI)")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="lower right", fontsize=8)
        return to_svg(fig, "pareto", "Cost against quality with the Pareto frontier")


def all_charts(report: Mapping[str, Any]) -> dict[str, str | None]:
    """Every chart by key (None = not available)."""
    return {
        "means": means_chart(report),
        "main_effects": main_effects_chart(report),
        "interactions": interaction_chart(report),
        "heatmap": heatmap_chart(report),
        "pareto": pareto_chart(report),
    }
