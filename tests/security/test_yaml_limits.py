"""YAML findings: alias bombs (eval.yaml, dataset, summary.yaml in a runs dir), huge
files and silently accepted duplicate keys — every YAML read is bounded."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from eval_harness.config import yamlio
from tests.conftest import run_cli

from ..analysis.rundir_writer import write_aeh

# 9 levels x 9 aliases: ~4e8 nodes once expanded (the 453-byte attack of the issue)
BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
    for i in range(8))

CONFIG = """name: demo
matrix:
  factors:
    model: [m1, m2]
runner: {type: cli, command: "python3 -c 'print(1)'"}
dataset: {path: cases.yaml}
judges:
  - name: ok
    check: 'return True, ""'
"""


def _timed_cli(*argv: str) -> tuple[int, str, float]:
    t0 = time.monotonic()
    code, out, err = run_cli(*argv)
    return code, out + err, time.monotonic() - t0


def test_alias_bomb_in_eval_yaml_is_a_quick_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG + BOMB)
    code, text, took = _timed_cli("--config", str(cfg), "--dry-run")
    assert code == 2 and "alias bomb" in text and took < 10, (code, text)


def test_alias_bomb_in_dataset_is_a_quick_dataset_error(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(CONFIG)
    (tmp_path / "cases.yaml").write_text(BOMB + "cases: *i\n")
    code, text, took = _timed_cli("--config", str(tmp_path / "eval.yaml"), "--dry-run")
    assert code == 2 and "alias bomb" in text and "cases.yaml" in text and took < 10, text


def test_alias_bomb_summary_yaml_is_left_out_with_a_note(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    data = {(lvl,): {f"c{i}": [{"ok": bool((i + j) % 2)}] for i in range(4)}
            for j, lvl in enumerate(["a", "b"])}
    write_aeh(runs, data, ["model"])
    evil = runs / "2026-07-30-evil"
    evil.mkdir()
    (evil / "summary.yaml").write_text(BOMB + "per_case: {c0: {ok: {value: *i}}}\n")
    code, text, took = _timed_cli("--analyze-only", str(runs), "--output", str(tmp_path / "o"))
    flat = "".join(text.split())  # the console wraps long paths mid-word at 80 columns
    assert code in (0, 1) and took < 20 and "aliasbomb" in flat and "-evil:" in flat, text


def test_duplicate_key_in_eval_yaml_names_both_lines(tmp_path: Path) -> None:
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG + "name: other\n")
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: x}}\n")
    code, text, _ = _timed_cli("--config", str(cfg), "--dry-run")
    assert code == 2 and "duplicate key 'name' (lines 1 and 10)" in text, text


def test_duplicate_key_in_dataset_and_flow_mappings(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(CONFIG)
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: x, q: y}}\n")
    code, text, _ = _timed_cli("--config", str(tmp_path / "eval.yaml"), "--dry-run")
    assert code == 2 and "duplicate key 'q'" in text, text


def test_recursive_alias_and_deep_nesting_are_refused() -> None:
    with pytest.raises(yamlio.YamlProblem, match="recursive"):
        yamlio.parse_yaml("a: &x [1, *x]\n")
    with pytest.raises(yamlio.YamlProblem, match="nested deeper"):
        yamlio.parse_yaml("[" * 1000 + "]" * 1000)


def test_file_size_is_bounded_before_reading(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "MAX_YAML_BYTES", 1000)
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(CONFIG + "# " + "x" * 2000 + "\n")
    code, text, _ = _timed_cli("--config", str(cfg), "--dry-run")
    assert code == 2 and "larger than" in text, text


def test_merge_keys_and_ordinary_anchors_still_work() -> None:
    data, _ = yamlio.parse_yaml("base: &b {k: 1}\nuse: {<<: *b, z: 2}\nlist: [*b, *b]\n")
    assert data["use"] == {"k": 1, "z": 2} and data["list"] == [{"k": 1}, {"k": 1}]


@pytest.mark.parametrize(("where", "want"), [
    ("metadata", "metadata.k.k.k.k.k"), ("runner.settings", "runner.settings.k.k.k.k"),
    ("judges", "judges[1].k.k.k.k")])
def test_a_value_nested_250_deep_names_its_key_path(tmp_path: Path, where: str,
                                                    want: str) -> None:
    """Issue 34 (earlier corpus): the depth limit's exit 2 says where, not only the line."""
    deep = "x"
    for _ in range(250):
        deep = f"{{k: {deep}}}"
    text = CONFIG.replace("runner: {type: cli,", "runner: {type: cli, settings: " + deep + ","
                          ) if where == "runner.settings" else (
        CONFIG + f"  - {deep}\n" if where == "judges" else CONFIG + f"metadata: {deep}\n")
    (tmp_path / "eval.yaml").write_text(text)
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: x}}\n")
    code, out, _ = _timed_cli("--config", str(tmp_path / "eval.yaml"), "--dry-run")
    assert code == 2, out
    [line] = [ln for ln in out.splitlines() if ln.startswith("error:")]
    assert want in line and "nested deeper than" in line, line
