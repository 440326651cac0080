"""agent-eval-harness behind the two seams: registered by the application layer, its
errors option reachable as the public ``aeh_errors=``, and no core package imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import eval_harness
from eval_harness import aeh
from eval_harness.analysis.loading.formats import classify, formats
from eval_harness.config.dialects import registered_dialects
from tests.conftest import FIXTURES, ROOT

CORE = ("_util", "config", "starter", "matrix", "pricing", "trace", "cache", "store",
        "judges", "runner", "analysis", "reports")


def test_registered_for_every_door() -> None:
    assert aeh.DIALECT in registered_dialects()
    assert aeh.FORMAT in formats()
    assert classify({"summary.yaml", "condition.json", "cases"}) == aeh.NAME
    assert classify({"summary.yaml", "run.json"}) == "native"
    assert aeh.format_options("zero") == {aeh.NAME: {"errors": "zero"}}


def test_public_load_runs_keeps_aeh_errors() -> None:
    runs = FIXTURES / "aeh_runs"
    default = eval_harness.load_runs(runs)
    zero = eval_harness.load_runs(runs, aeh_errors="zero")
    assert default.attrs["formats"] == zero.attrs["formats"] == [aeh.NAME]
    assert "--aeh-errors zero gives its 0" in str(list(default.attrs["issues"]))
    assert "as agent-eval-harness scores it" in str(list(zero.attrs["issues"]))
    with pytest.raises(ValueError, match="aeh_errors is `exclude` or `zero`"):
        eval_harness.load_runs(runs, aeh_errors="drop")


def test_no_core_package_imports_aeh() -> None:
    bad = []
    for package in CORE:
        for path in sorted((ROOT / "eval_harness" / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(n == "eval_harness.aeh" or n.startswith("eval_harness.aeh.")
                       for n in names):
                    bad.append(str(Path(path).relative_to(ROOT)))
    assert bad == []
