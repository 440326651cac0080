"""The doors map their inputs to the application layer's options: the API accepts exactly
the CLI's long flags (snake_case) as keywords; the option objects carry no argparse;
nothing outside ``cli/`` imports ``cli/``; one gate alias resolution, one gate-judge rule."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from eval_harness.analysis.compare.gate import gate_rule_of
from eval_harness.api import _known
from eval_harness.app.options import AnalysisOptions, RunOptions
from eval_harness.cli.args import build_parser
from eval_harness.config.gates import gate_judges
from eval_harness.errors import UsageError
from tests.conftest import ROOT

PACKAGE = ROOT / "eval_harness"


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_api_keywords_are_the_cli_flags() -> None:
    assert _known() == set(vars(build_parser().parse_args([])))


def test_options_are_the_flags_the_commands_read() -> None:
    flags = set(vars(build_parser().parse_args([])))
    assert set(AnalysisOptions.names()) <= flags
    assert set(RunOptions.names()) - {"quiet"} <= flags


def test_nothing_outside_cli_imports_cli() -> None:
    # `python -m eval_harness` (eval_harness/__main__.py) is the command itself
    bad = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
           if PACKAGE / "cli" not in p.parents and p != PACKAGE / "__main__.py"
           and any(m == "eval_harness.cli" or m.startswith("eval_harness.cli.")
                   for m in _imports(p))]
    assert bad == []


def test_the_application_layer_has_no_argparse() -> None:
    assert not [p.name for p in (PACKAGE / "app").glob("*.py") if "argparse" in _imports(p)]


def test_the_gate_alias_is_resolved_once() -> None:
    assert gate_rule_of(None) == "overall" and gate_rule_of("strict") == "strict"
    assert gate_rule_of(None, True) == "cases" == AnalysisOptions(significant_only=True).gate_rule()
    with pytest.raises(UsageError, match="--significant-only means --gate cases, not --gate strict"):
        AnalysisOptions(gate="strict", significant_only=True).gate_rule()


def test_gate_judges_are_the_flagged_ones_then_the_composite_list() -> None:
    from types import SimpleNamespace as NS

    cfg = NS(judges=[NS(name="a", gate=True), NS(name="b", gate=False), NS(name="c", gate=True)],
             composite=NS(gates=["b", "c"]))
    assert gate_judges(cfg) == ("a", "c", "b")
    assert gate_judges(None) == ()


def test_serve_passes_its_analysis_options_to_the_cache(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from eval_harness.cli.serve_cmd import build_parser as serve_parser
    from eval_harness.serve.app import create_app

    assert serve_parser().parse_args([]).aeh_errors == "exclude"
    assert serve_parser().parse_args(["--aeh-errors", "zero"]).aeh_errors == "zero"
    app = create_app([tmp_path], options=AnalysisOptions(aeh_errors="zero"))
    try:
        assert app.dash.cache.options == AnalysisOptions(aeh_errors="zero")
    finally:
        app.dash.cache.close()
