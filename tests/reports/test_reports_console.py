"""Console report: content of every section, plain output when piped or under NO_COLOR."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from eval_harness.reports import AnalysisDocuments, print_console


def _split(inputs: dict[str, Any]) -> tuple[AnalysisDocuments, Any]:
    """The fixture inputs as (documents, frame), the renderers' two arguments."""
    return AnalysisDocuments(**{k: v for k, v in inputs.items() if k != "frame"}), inputs["frame"]


def _render(inputs: dict[str, Any], **console_kw: Any) -> str:
    buf = io.StringIO()
    print_console(Console(file=buf, width=220, **console_kw), *_split(inputs))
    return buf.getvalue()


def test_console_sections(inputs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _render(inputs)
    assert "\x1b[" not in out  # a StringIO is not a terminal: plain text
    for title in ("Conditions", "ANOVA (rm, greenhouse-geisser; correction holm)", "Contrasts",
                  "Per-judge hits (bh over 6 tests)", "Regression comparisons", "Thresholds",
                  "Cases × conditions", "Leaderboard", "Pairwise judges", "saturation: 2 of 8"):
        assert title in out
    assert "<i>cot</i>" in out  # console shows user text verbatim (no markup parsing)
    assert "reference" in out and "improved" in out
    assert "2/3 ~" in out  # flaky cell
    assert "c02" not in out.split("Cases × conditions")[1].split("Leaderboard")[0]  # same everywhere
    assert "FAIL" in out and "2 of 4 threshold check(s) failed" in out


def test_console_colour_only_on_a_terminal(inputs: dict[str, Any],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" in _render(inputs, force_terminal=True, color_system="standard")
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[31" not in _render(inputs, force_terminal=True, color_system="standard")


def test_console_tolerates_missing_blocks(inputs: dict[str, Any]) -> None:
    out = _render({"anova": {}, "frame": inputs["frame"]})
    assert "ANOVA (?; correction ?): not available" in out
    assert "Leaderboard: not available" in out and "Regression comparisons: not available" in out
