"""Module judges (eval_harness/judges/code.py): each config's module beside it."""

from __future__ import annotations

from pathlib import Path

from eval_harness.judges.code import FunctionJudge


def _module(folder: Path, value: float) -> Path:
    folder.mkdir()
    (folder / "samename_judges.py").write_text(
        f"def score(outputs):\n    return {value}, 'from {folder.name}'\n")
    return folder


def test_two_configs_with_same_named_modules_each_get_their_own(tmp_path: Path) -> None:
    first = FunctionJudge("samename_judges", "score", _module(tmp_path / "a", 0.25), "judges[0]")
    second = FunctionJudge("samename_judges", "score", _module(tmp_path / "b", 0.75), "judges[0]")
    again = FunctionJudge("samename_judges", "score", tmp_path / "a", "judges[0]")
    ctx = {"outputs": {"output": "x"}}
    assert first.evaluate(ctx, 0).value == 0.25
    assert second.evaluate(ctx, 0).value == 0.75  # not the first config's module
    assert again.evaluate(ctx, 0).value == 0.25
