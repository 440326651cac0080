"""The analysis settings read from a config (factor levels, pass mark, stratum) live in
the analysis layer: ``orchestrate serve`` and the CLI pipeline share them, and serve
depends on no CLI internals."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd

from eval_harness.analysis.config_settings import factor_levels, pass_mark, stratum
from eval_harness.config.loader import load_config
from tests.conftest import ROOT

BASE = """\
name: demo
matrix:
  factors:
    model: [m1, m2]
    effort: [low, high]
{analysis}
judges:
  - name: q
    check: 'return 1, ""'
{thresholds}
"""


def _loaded(tmp_path: Path, analysis: str = "", thresholds: str = ""):  # type: ignore[no-untyped-def]
    path = tmp_path / "eval.yaml"
    path.write_text(BASE.format(analysis=analysis, thresholds=thresholds), encoding="utf-8")
    return load_config(path)


def test_factor_levels_in_config_order(tmp_path: Path) -> None:
    assert factor_levels(_loaded(tmp_path)) == {"model": ["m1", "m2"], "effort": ["low", "high"]}
    assert factor_levels(None) is None


def test_pass_mark_precedence(tmp_path: Path) -> None:
    assert pass_mark(None) is None
    assert pass_mark(_loaded(tmp_path)) is None
    both = _loaded(tmp_path, analysis="  analysis:\n    pass_mark: 0.7",
                   thresholds="thresholds:\n  pass_score: 0.6")
    assert pass_mark(both) == 0.7
    only = _loaded(tmp_path, thresholds="thresholds:\n  pass_score: 0.6")
    assert pass_mark(only) == 0.6


def test_stratum_prefers_tier_then_difficulty() -> None:
    frame = pd.DataFrame()
    frame.attrs["case_tags"] = {"a": {"domain": "x", "difficulty": "hard"}, "b": None}
    assert stratum(frame) == "difficulty"
    frame.attrs["case_tags"] = {"a": {"tier": 1, "domain": "x"}}
    assert stratum(frame) == "tier"
    frame.attrs["case_tags"] = {"a": {"other": 1}}
    assert stratum(frame) is None


def test_serve_imports_nothing_from_the_cli() -> None:
    bad = []
    for path in sorted((ROOT / "eval_harness" / "serve").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "eval_harness.cli"):
                bad.append(f"{path.name}: {node.module}")
    assert bad == []
