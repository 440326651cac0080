"""Compact console layout: fits 80 columns, never splits a number, compact labels everywhere."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from eval_harness.reports import AnalysisDocuments, build_report, fmt, print_console
from eval_harness.reports.markdown import render_markdown
from eval_harness.reports.tables import all_tables

_LONG = {"small": "example-small-model", "large": "example-large-model"}


def _long_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """The fixture with long model levels sharing the prefix ``example-``."""
    frame = inputs["frame"].copy()
    frame["model"] = frame["model"].map(_LONG)
    frame.attrs = {**inputs["frame"].attrs,
                   "levels": {**inputs["frame"].attrs["levels"], "model": list(_LONG.values())}}
    return {**inputs, "frame": frame}


def _split(inputs: dict[str, Any]) -> tuple[AnalysisDocuments, Any]:
    """The fixture inputs as (documents, frame), the renderers' two arguments."""
    return AnalysisDocuments(**{k: v for k, v in inputs.items() if k != "frame"}), inputs["frame"]


def _render(inputs: dict[str, Any], width: int) -> str:
    buf = io.StringIO()
    print_console(Console(file=buf, width=width, force_terminal=False), *_split(inputs))
    return buf.getvalue()


@pytest.mark.parametrize("width", [80, 120])
def test_console_fits_width_and_keeps_cells_whole(inputs: dict[str, Any], width: int) -> None:
    data = _long_inputs(inputs)
    out = _render(data, width)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width
    report = build_report(*_split(data))
    checked = 0
    for t in all_tables(report):
        for row in t.rows:
            # Every always-shown cell appears whole, and all of a row's always-shown cells
            # sit on one line in order: no cell (no number) was wrapped or split.
            keep = [c for c, prio in zip(row, t.priority, strict=True) if prio == 0 and c]
            pattern = ".*".join(re.escape(c) for c in keep)
            assert any(re.search(pattern, line) for line in lines), (t.key, keep)
            checked += sum(bool(re.search(r"\d", c)) for c in keep)
    assert checked > 40


def test_console_80_columns_shows_compact_labels(inputs: dict[str, Any]) -> None:
    out = _render(_long_inputs(inputs), 80)
    assert "small-model · plain" in out and "example-small-model" not in out
    assert "levels shown without their common prefix: model 'example-'" in out
    assert "not shown at 80 columns:" in out  # hidden columns are named, not silently lost
    # The leaderboard shows the quality mean from leaderboard.json (field "quality").
    board = out.split("Leaderboard")[1]
    assert "0.92 [0.82, 1.00]" in board and "– –" not in board


def test_console_wide_shows_every_column(inputs: dict[str, Any]) -> None:
    out = _render(inputs, 220)
    assert "not shown at" not in out
    for head in ("Wilson 95%", "p95 lat.", "cost/run", "Δ vs ref"):
        assert head in out


def test_level_display_drops_only_unambiguous_prefixes() -> None:
    disp = fmt.level_display({"model": ["example-small", "example-large"],
                              "x": ["run-a", "run-"], "y": ["gpt4", "gpt5"], "z": ["only-one"]})
    assert disp["model"] == {"example-small": "small", "example-large": "large"}
    assert disp["x"] == {"run-a": "run-a", "run-": "run-"}  # "" would be ambiguous/empty
    assert disp["y"] == {"gpt4": "gpt4", "gpt5": "gpt5"}  # no separator: keep whole
    assert disp["z"] == {"only-one": "only-one"}
    assert fmt.compact_label({"model": "example-small", "y": "gpt4"}, disp) == "small · gpt4"


def test_estimate_formats() -> None:
    assert fmt.est_pm(0.12, [0.03, 0.21]) == "+0.12 ±0.09"
    assert fmt.est_pm(0.12, [0.03, 0.25]) == "+0.12 [0.03, 0.25]"  # asymmetric (clipped)
    assert fmt.est_ci(0.658, [0.571, 0.746]) == "0.66 [0.57, 0.75]"
    assert fmt.est_ci(None, None) == fmt.DASH and fmt.est_pm(float("nan"), None) == fmt.DASH


def _with_verdicts(report: dict[str, Any], verdicts: list[str]) -> dict[str, Any]:
    comps = []
    for c, v in zip(report["comparisons"], verdicts, strict=True):
        comps.append({**c, "verdict": v, "regressed": ["c07", "c08"]})
    return {**report, "comparisons": comps}


def test_markdown_headline_follows_verdict_semantics(inputs: dict[str, Any]) -> None:
    base = build_report(*_split(inputs))
    md = render_markdown(_with_verdicts(base, ["regressed", "cases regressed", "improved"]))
    head = md.split("### Conditions")[0]
    assert head.count(":warning:") == 1
    assert ":warning: regressed: small · &lt;i&gt;cot&lt;/i&gt; vs small · plain" in head
    assert "- cases regressed: large · plain vs small · plain" in head and "not significant" in head
    assert "large · &lt;i&gt;cot&lt;/i&gt; vs" not in head  # improved: table only
    table = md.split("### Regression comparisons")[1].split("###")[0]
    assert "| regr. |" in table and "| 2 |" in table  # regressed-case counts, own column


def test_per_judge_off_says_how_to_turn_it_on(inputs: dict[str, Any]) -> None:
    out = _render({**inputs, "anova": {k: v for k, v in inputs["anova"].items()
                                       if k != "per_judge"}}, 100)
    assert "Per-judge hits: not run (add --per-judge" in out
    assert "Judge means by condition" in out and "correct" in out


def test_html_cells_carry_full_levels(written: dict[str, Any]) -> None:
    page = written["html"].read_text(encoding="utf-8")
    assert 'title="model=large, prompt=&lt;i&gt;cot&lt;/i&gt; (id 8207a803791a)"' in page
    assert "large · &lt;i&gt;cot&lt;/i&gt;</td>" in page
