"""The HTML charts: compact labels, matrix order, heatmap annotation and contrast, Pareto
labels without overlaps, log axis; all from the fixture report (no browser)."""

from __future__ import annotations

import copy
import html
import re
from typing import Any

import numpy as np
import pytest
from matplotlib import colormaps

from eval_harness.reports import AnalysisDocuments, build_report
from eval_harness.reports.html import chart_labels as lb
from eval_harness.reports.html.chart_heatmap import heatmap_chart, text_colour
from eval_harness.reports.html.chart_pareto import Box, _overlap, pareto_chart, place_labels
from eval_harness.reports.html.charts import (
    all_charts,
    interaction_chart,
    main_effects_chart,
    means_chart,
)

_LONG = {"small": "example-small", "large": "example-large"}


def _texts(svg: str) -> list[str]:
    """Every SVG text node, unescaped, in drawing order (one per line of a multi-line text)."""
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


@pytest.fixture(scope="module")
def report(inputs: dict[str, Any]) -> dict[str, Any]:
    """The fixture report with model levels ``example-small`` / ``example-large``."""
    frame = inputs["frame"].copy()
    frame["model"] = frame["model"].map(_LONG)
    frame.attrs = {**inputs["frame"].attrs,
                   "levels": {**inputs["frame"].attrs["levels"], "model": list(_LONG.values())}}
    anova = copy.deepcopy(inputs["anova"])
    anova["design"]["factors"]["model"] = list(_LONG.values())
    comparisons = copy.deepcopy(inputs["comparisons"])
    for block in [comparisons.get("reference") or {}] + [
            side for rec in comparisons["comparisons"] for side in (rec["reference"], rec["candidate"])]:
        if block.get("levels"):
            block["levels"]["model"] = _LONG[block["levels"]["model"]]
    return build_report(AnalysisDocuments(anova=anova, comparisons=comparisons), frame)


def test_every_chart_uses_compact_labels_and_names_the_prefix(report: dict[str, Any]) -> None:
    charts = all_charts(report)
    assert all(c is not None for c in charts.values())
    for key, chart in charts.items():
        assert chart is not None
        texts = _texts(chart.svg)
        assert not any("model=" in t or "example-" in t for t in texts), key
        if key != "pareto":
            assert "small" in texts or any("small" in t for t in texts), key
    means = charts["means"]
    assert means is not None
    assert "small · plain" in _texts(means.svg)
    assert "levels shown without their common prefix: model 'example-'" in means.notes
    assert "labels: model · prompt" in means.notes
    ref = next(c for c in report["conditions"] if c["is_reference"])
    assert any(t.startswith("reference: ") and ref["short_label"] in t
               for t in _texts(means.svg))
    assert any(ref["short_label"] in n for n in means.notes)


def test_levels_follow_the_matrix_not_the_means(report: dict[str, Any]) -> None:
    # large beats small in the fixture; put the rows in mean order as an unsorted model would.
    rep = copy.deepcopy(report)
    for rows in rep["main_effects"].values():
        rows.sort(key=lambda r: -r["mean"])
    rep["interactions"]["model:prompt"].reverse()
    main = main_effects_chart(rep)
    inter = interaction_chart(rep)
    assert main is not None and inter is not None
    texts = _texts(main.svg)
    assert texts.index("small") < texts.index("large")
    assert texts.index("plain") < texts.index("<i>cot</i>")
    texts = _texts(inter.svg)
    assert texts.index("small") < texts.index("large")  # x axis
    assert texts.index("plain") < texts.index("<i>cot</i>")  # legend
    assert [c["levels"]["model"] for c in lb.in_matrix_order(rep, rep["conditions"])] == [
        "example-small", "example-small", "example-large", "example-large"]


def test_heatmap_annotates_small_grids_and_sorts_rows(report: dict[str, Any]) -> None:
    chart = heatmap_chart(report)
    assert chart is not None
    texts = _texts(chart.svg)
    cells = [t for t in texts if re.fullmatch(r"\d+/\d+( ~)?( !)?|E", t)]
    assert len(cells) == 8 * 4
    assert any(t.endswith("~") for t in cells)
    assert not any("…" in t or "..." in t for t in texts)
    assert "text: passes/attempts (~ flaky, ! some attempts errored, E errored)" in chart.notes
    # Rows: mean composite across conditions, hardest first (y tick labels, top to bottom).
    grid = report["case_grid"]["cases"]
    means = {r["case_id"]: np.mean([c["composite"] for c in r["cells"].values()]) for r in grid}
    shown = [t for t in texts if t in means]
    assert sorted(shown) == sorted(means)
    assert [means[c] for c in shown] == sorted(means[c] for c in shown)
    # Column headers: the factor names once, then the stacked levels per condition.
    assert "model" in texts and "prompt" in texts


def _with_cases(report: dict[str, Any], n: int) -> dict[str, Any]:
    """A copy of ``report`` whose case grid is ``n`` copies of its first case."""
    rep = copy.deepcopy(report)
    row = rep["case_grid"]["cases"][0]
    rep["case_grid"]["cases"] = [{**row, "case_id": f"x{i:02d}"} for i in range(n)]
    return rep


def test_heatmap_leaves_big_grids_unannotated(report: dict[str, Any]) -> None:
    rep = _with_cases(report, 45)
    chart = heatmap_chart(rep)
    assert chart is not None
    assert not any(re.fullmatch(r"\d+/\d+.*", t) for t in _texts(chart.svg))
    assert not any(n.startswith("text:") for n in chart.notes)


@pytest.mark.parametrize("value", np.linspace(0, 1, 21))
def test_cell_text_contrasts_with_the_cell(value: float) -> None:
    rgba = colormaps["viridis"](value)

    def lum(c: tuple[float, ...]) -> float:
        lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    cell = lum(rgba)
    ratio = {"#000000": (cell + 0.05) / 0.05, "#ffffff": 1.05 / (cell + 0.05)}
    chosen = text_colour(rgba)
    assert ratio[chosen] >= max(ratio.values()) - 1e-9
    assert ratio[chosen] >= 4.5  # WCAG AA for normal text holds on all of viridis


def test_place_labels_never_overlaps() -> None:
    rng = np.random.default_rng(11)
    for _ in range(50):
        n = int(rng.integers(2, 15))
        xs, ys = rng.uniform(0, 300, n), rng.uniform(0, 200, n)
        obstacles: list[Box] = [(x - 4, y - 4, x + 4, y + 4) for x, y in zip(xs, ys, strict=True)]
        cands = [[(x - 60, y + 3, x - 5, y + 12), (x + 5, y - 12, x + 60, y - 3)]
                 for x, y in zip(xs, ys, strict=True)]
        placed = place_labels(cands, obstacles, (0, 0, 400, 250))
        boxes = [b for b, _ in placed]
        for i, a in enumerate(boxes):
            assert not any(_overlap(a, o, 0.5) for o in obstacles)
            assert not any(_overlap(a, b, 0.5) for b in boxes[i + 1:])
        for (b, moved), c in zip(placed, cands, strict=True):
            assert moved or b in c


def test_pareto_labels_frontier_only_with_a_log_axis(report: dict[str, Any]) -> None:
    chart = pareto_chart(report)
    assert chart is not None
    front = set(report["pareto"]["frontier"])
    labels = {c["short_label"] for c in report["conditions"] if c["condition_id"] in front}
    others = {c["short_label"] for c in report["conditions"]} - labels
    texts = _texts(chart.svg)
    assert labels <= set(texts) and not others & set(texts)
    assert "Pareto frontier" in texts and ("dominated" in texts) == bool(others)
    # Costs span 0.002 … 0.04 (20×): log axis, tick labels as plain text (no mathtext).
    assert any("log scale" in t for t in texts)
    assert not any("mathdefault" in t or "$\\" in t for t in texts)
    assert any(re.fullmatch(r"\$0\.0\d+", t) for t in texts)
    assert any(n.startswith("x axis logarithmic") for n in chart.notes)


def test_pareto_linear_axis_mutes_dominated_points(report: dict[str, Any]) -> None:
    rep = copy.deepcopy(report)
    for i, c in enumerate(rep["conditions"]):
        c["cost_mean_usd"] = 0.01 + 0.002 * i
    best = max(rep["conditions"], key=lambda c: c["mean"])
    best["cost_mean_usd"] = 0.005  # cheapest and best: the only frontier point
    rep["pareto"]["frontier"] = [best["condition_id"]]
    chart = pareto_chart(rep)
    assert chart is not None
    texts = _texts(chart.svg)
    assert not any("log scale" in t for t in texts)
    assert "dominated" in texts and best["short_label"] in texts
    assert sum(c["short_label"] in texts for c in rep["conditions"]) == 1
    assert chart.svg.count('fill: #999999') >= 1


def test_means_chart_without_a_reference_has_no_legend(report: dict[str, Any]) -> None:
    rep = copy.deepcopy(report)
    for c in rep["conditions"]:
        c["is_reference"] = False
    chart = means_chart(rep)
    assert chart is not None
    assert not any(t.startswith("reference") for t in _texts(chart.svg))


def test_heatmap_embeds_one_pixel_per_cell(report: dict[str, Any]) -> None:
    # unsampled (interpolation "none"): the image is the grid itself, scaled by the SVG
    # transform, not a raster at figure size (tens of MB of RGBA while rendering)
    rep = _with_cases(report, 45)
    chart = heatmap_chart(rep)
    assert chart is not None
    n_cond = len(rep["case_grid"]["condition_ids"])
    images = re.findall(r"<image [^>]*>", re.sub(r"base64,[^\"]*", "", chart.svg))
    grid = [i for i in images if "pixelated" in i]
    assert len(grid) == 1, images
    assert f'width="{n_cond}"' in grid[0] and 'height="45"' in grid[0]
