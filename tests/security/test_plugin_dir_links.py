"""Issue 34 (minor): a symbolic link inside a ``plugin_dirs`` folder is never followed
(no file outside the folder is copied into the run files the Action uploads), and a link
loop is one clear configuration error (exit 2, naming it), not every cell errored."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

FAKE = ROOT / "tests" / "fixtures" / "agents" / "fake_claude.py"
SECRET = "outside-the-plugin-folder-7f3a9c"


def _eval(tmp: Path) -> Path:
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"q": f"q{i}"}} for i in range(4)]))
    cfg = {"name": "plug", "matrix": {"factors": {"mode": ["answer", "echo"]}},
           "models": {"skill": "fake-model"},
           "runner": {"type": "claude-code", "command": [sys.executable, "-S", str(FAKE)],
                      "plugin_dirs": ["plugins/tools"]},
           "dataset": {"path": "cases.yaml"},
           "execution": {"timeout": 20, "retries": 0, "prompt": "{{ input.mode }} {{ case_id }}"},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    plugin = tmp / "plugins" / "tools"
    (plugin / "skills").mkdir(parents=True)
    (plugin / "skills" / "SKILL.md").write_text("a skill\n")
    return plugin


def _links(plugin: Path, tmp: Path, kind: str) -> str:
    if kind == "outside file":
        (tmp / "secret.txt").write_text(SECRET)
        os.symlink(tmp / "secret.txt", plugin / "skills" / "notes.md")
        return "notes.md"
    if kind == "outside folder":
        (tmp / "private").mkdir()
        (tmp / "private" / "key.txt").write_text(SECRET)
        os.symlink(tmp / "private", plugin / "docs")
        return "docs"
    if kind == "loop to itself":
        os.symlink(".", plugin / "skills" / "again")
        return "again"
    os.symlink("b", plugin / "a")  # a two-link loop
    os.symlink("a", plugin / "b")
    return "symbolic link"


@pytest.mark.parametrize("kind", ["outside file", "outside folder", "loop to itself",
                                  "two-link loop"])
def test_links_in_a_plugin_folder_are_refused_before_any_cell(tmp_path: Path, cli,
                                                              kind: str) -> None:
    plugin = _eval(tmp_path)
    named = _links(plugin, tmp_path, kind)
    runs = tmp_path / "runs"
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir", str(runs),
                       "--no-cache")
    assert code == 2, err
    [line] = [ln for ln in err.splitlines() if "plugin_dirs" in ln]
    assert named in line and "symbolic link" in line and "hint:" in line, err
    assert not list(runs.rglob("record.json"))  # nothing ran, so no cell errored
    for path in (runs.rglob("*") if runs.exists() else []):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path


def test_a_plain_plugin_folder_is_still_staged(tmp_path: Path, cli) -> None:
    _eval(tmp_path)
    runs = tmp_path / "runs"
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir", str(runs),
                       "--no-cache")
    assert code == 0, err
    staged = list(runs.rglob(".staged-plugins/tools/skills/SKILL.md"))
    assert len(staged) == 8 and all(p.read_text() == "a skill\n" for p in staged)
