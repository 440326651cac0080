"""Persisted judge module paths keep resolving after the module moved (judges.moved)."""

from __future__ import annotations

from pathlib import Path

from eval_harness.judges.code import FunctionJudge
from eval_harness.judges.moved import MOVED_MODULES, current_module


def test_the_aeh_builtins_path_resolves_to_its_new_home(tmp_path: Path) -> None:
    assert current_module("eval_harness.judges.aeh_builtins") == "eval_harness.aeh.builtin_judges"
    assert current_module("myjudges") == "myjudges"
    judge = FunctionJudge("eval_harness.judges.aeh_builtins", "cost_budget", tmp_path,
                          "judges[0]")
    ctx = {"outputs": {"cost_usd": 0.5}, "judge_kwargs": {"max_cost_usd": 1.0}}
    assert judge.evaluate(ctx, 0).value is True


def test_moved_modules_name_modules_that_import() -> None:
    import importlib

    for old, new in MOVED_MODULES.items():
        assert old != new
        importlib.import_module(new)
