"""Run data is untrusted: it must not choose where analysis writes, nor make analysis or
the HTML drill-down read outside the runs tree (../ ids, symlinks out, symlink loops)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli

from ..analysis.rundir_writer import write_native

DATA = {(lvl,): {f"c{i}": [{"ok": bool((i + j) % 3)}] for i in range(5)}
        for j, lvl in enumerate(["a", "b"])}


def _runs(root: Path) -> list[Path]:
    return write_native(root, DATA, ["model"], eval_name="demo")


@pytest.mark.parametrize("hostile", ["../../pwned", "/tmp/eval-harness-pwned-abs", "..", "a/b"])
def test_analyze_only_never_writes_where_run_json_says(tmp_path: Path, hostile: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs(tmp_path / "work" / "runs")
    for run in runs:
        doc = json.loads((run / "run.json").read_text())
        doc["eval"] = hostile
        (run / "run.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path / "work")
    before = set(tmp_path.rglob("*")) | set(Path("/tmp").glob("eval-harness-pwned*"))
    code, _, err = run_cli("--analyze-only", str(runs[0].parent))
    assert code in (0, 1), err
    after = set(tmp_path.rglob("*")) | set(Path("/tmp").glob("eval-harness-pwned*"))
    new = {p for p in after - before}
    assert new and all(p.is_relative_to(tmp_path / "work" / "analysis") for p in new), new
    assert (tmp_path / "work" / "analysis" / "demo" / "report.md").is_file()  # the folder name


def test_drilldown_reads_nothing_outside_the_runs_root(tmp_path: Path) -> None:
    runs = _runs(tmp_path / "runs")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "outputs.json").write_text(json.dumps({"output": "TOPSECRET-OUTPUT"}))
    (outside / "input.json").write_text(json.dumps({"q": "TOPSECRET-INPUT"}))
    for run in runs:  # a record whose case id climbs out of the runs root
        rec = json.loads((run / "cases" / "c0" / "record.json").read_text())
        rec["case_id"] = "../../../../outside"
        (run / "cases" / "c0" / "record.json").write_text(json.dumps(rec))
        # and a case whose outputs.json is a symlink to a file outside
        os.remove(run / "cases" / "c1" / "record.json")
        (run / "cases" / "c1" / "outputs.json").symlink_to(outside / "outputs.json")
        rec["case_id"] = "c1"
        (run / "cases" / "c1" / "record.json").write_text(json.dumps(rec))
    out = tmp_path / "out"
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output", str(out))
    assert code in (0, 1), err
    html = (out / "report.html").read_text()
    assert "outside" in html  # the case is reported (as a label) ...
    assert "TOPSECRET" not in html  # ... but nothing is read from there


def test_symlink_out_of_the_tree_is_not_followed_and_noted(tmp_path: Path) -> None:
    _runs(tmp_path / "runs")
    elsewhere = tmp_path / "elsewhere"
    write_native(elsewhere, {("zzz",): {"c0": [{"ok": True}]}}, ["model"], eval_name="demo")
    (tmp_path / "runs" / "demo" / "linked").symlink_to(elsewhere / "demo")
    out = tmp_path / "out"
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output", str(out),
                           "--json")
    assert code in (0, 1), err
    anova = json.loads((out / "anova.json").read_text())
    assert anova["design"]["factors"]["model"] == ["a", "b"]  # "zzz" never read
    assert "not followed" in err or "not followed" in (out / "report.md").read_text()


def test_symlinked_record_is_refused(tmp_path: Path) -> None:
    runs = _runs(tmp_path / "runs")
    stray = tmp_path / "stray.json"
    rec = json.loads((runs[0] / "cases" / "c0" / "record.json").read_text())
    rec["scores"]["ok"]["value"] = rec["scores"]["ok"]["normalized"] = 0.5
    stray.write_text(json.dumps(rec))
    os.remove(runs[0] / "cases" / "c0" / "record.json")
    (runs[0] / "cases" / "c0" / "record.json").symlink_to(stray)
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                           str(tmp_path / "o"))
    assert code in (0, 1), err
    assert "a symlink; not followed" in (tmp_path / "o" / "report.md").read_text()


def test_symlink_loop_does_not_crash(tmp_path: Path) -> None:
    _runs(tmp_path / "runs")
    (tmp_path / "runs" / "loop").symlink_to(tmp_path / "runs")
    (tmp_path / "runs" / "demo" / "self").symlink_to(tmp_path / "runs" / "demo" / "self")
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                           str(tmp_path / "o"))
    assert code in (0, 1) and "internal error" not in err, err
