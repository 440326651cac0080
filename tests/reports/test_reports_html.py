"""Static checks of the single-file HTML report: safety (escaping, CSP, no URLs, no
scripts) and graceful degradation (one condition, no costs, many conditions)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import report_fixture

from eval_harness.reports import AnalysisDocuments, build_report
from eval_harness.reports.html import render_html
from eval_harness.reports.html.templates import CSP


def _html(written: dict[str, Path]) -> str:
    return written["html"].read_text(encoding="utf-8")


def test_csp_and_no_external_resources(written: dict[str, Path]) -> None:
    page = _html(written)
    assert f'http-equiv="Content-Security-Policy" content="{CSP}"' in page
    assert "default-src 'none'" in CSP and "script-src" not in CSP
    assert "<script" not in page.lower()
    # No attribute points outside the file: only in-page anchors and data: images.
    for attr, url in re.findall(r'\b(src|href)\s*=\s*"([^"]*)"', page):
        assert url.startswith(("#", "data:")), (attr, url)
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", page)
    assert "@import" not in page and "<link" not in page and "<iframe" not in page


def test_user_text_is_escaped_everywhere(written: dict[str, Path]) -> None:
    page = _html(written)
    assert report_fixture.XSS not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the answer, shown as text
    assert "<i>" not in page  # the level "<i>cot</i>" in tables and SVG text
    svg_texts = re.findall(r"<text[^>]*>([^<]*)</text>", page)
    assert any("&lt;i&gt;cot&lt;/i&gt;" in t for t in svg_texts)  # matplotlib labels too
    assert "&lt;expected&gt;" in page and "wrong &amp; off" in page  # judge rationales


def test_page_has_every_chart_and_table(written: dict[str, Path]) -> None:
    page = _html(written)
    assert page.count('<svg role="img"') == 5
    for key in ("matrix", "anova", "contrasts", "per_judge", "comparisons", "thresholds", "grid",
                "leaderboard", "pairwise"):
        assert f'<h3 id="{key}">' in page
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "duplicate element ids across inline SVGs"
    assert "prefers-color-scheme: dark" in page and "currentColor" in page
    assert "more characters]" in page  # the 4,800-character answer of c02 was truncated
    assert page.count("<details>") == 8  # one drill-down per case


def _frame(levels: dict[str, list[Any]], n_cases: int, *, cost: bool) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    combos = pd.MultiIndex.from_product(list(levels.values()), names=list(levels)).tolist()
    for i, combo in enumerate(combos):
        lv = dict(zip(levels, combo, strict=True))
        cid = report_fixture.condition_id(lv)
        for c in range(n_cases):
            v = float(rng.random() < 0.3 + 0.4 * (i % 3) / 2)
            for judge, kind in (("ok", "boolean"), ("composite", "composite")):
                rows.append({"eval": "x", "run_id": f"r{i}", "condition_id": cid, **lv,
                             "replication": 1, "case_id": f"case{c}", "judge": judge, "value": v,
                             "kind": kind, "errored": False, "case_status": "ok",
                             "latency_s": 1.0 + i, "cost_usd": 0.01 * (i + 1) if cost else np.nan,
                             "tokens": np.nan, "tool_calls": np.nan, "case_hash": "",
                             "normalized": v})
    frame = pd.DataFrame(rows)
    frame.attrs.update(factors=list(levels), levels=levels, issues=[], case_tags={})
    return frame


def test_one_condition_without_costs_degrades_gracefully() -> None:
    frame = _frame({"model": ["only $x$ model"]}, 4, cost=False)
    report = build_report(AnalysisDocuments(anova={}), frame)
    page = render_html(report, frame=frame, runs_root=None)
    assert "not available" in page  # ANOVA, comparisons, drill-down
    assert page.count('<svg role="img"') >= 3  # means, main effect, heatmap; pareto by latency
    assert "only $x$ model" in page  # mathtext is off: dollars stay literal


def test_many_conditions_four_factors() -> None:
    levels = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2"], "c": ["c1", "c2", "c3", "c4"],
              "d": ["d1", "d2"]}
    frame = _frame(levels, 3, cost=True)
    report = build_report(AnalysisDocuments(anova={}), frame)
    assert len(report["conditions"]) == 48 and len(report["interactions"]) == 6
    page = render_html(report, frame=frame)
    assert page.count('<svg role="img"') == 5
