"""The shipped dialects and run formats are registered in ONE place — the application
layer's package, when it is imported — not by each door (issue 32): every door that reaches
``eval_harness.app`` reads agent-eval-harness's configs and run directories the same way."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _calls(name: str) -> list[str]:
    found = []
    for path in sorted([*(ROOT / "eval_harness").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if called == name:
                    found.append(str(path.relative_to(ROOT)))
    return found


def test_install_defaults_is_called_in_one_place() -> None:
    assert _calls("install_defaults") == ["eval_harness/app/__init__.py"]


@pytest.mark.parametrize("module", ["eval_harness.api", "eval_harness.serve",
                                    "eval_harness.app.options"])
def test_each_door_reads_the_aeh_format_without_registering_it(module: str) -> None:
    code = f"import {module}\n" + ("from eval_harness.analysis.loading.formats import formats\n"
             "from eval_harness.config.dialects import registered_dialects\n"
             "print(sorted(f.name for f in formats()), len(registered_dialects()))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout
    assert out.split() == ["['agent-eval-harness',", "'native']", "1"]
