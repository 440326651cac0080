"""Attacks through run directories (issue 28; a downloaded CI artifact is untrusted):
odd-shaped records, FIFOs named like run files, malformed pairwise files and terminal
escapes. ``show``, ``runs`` and ``--analyze-only`` must answer (exit 0 or 2, errored
entries), never hang and never exit 70, and never print raw escapes."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from rundir_writer import write_native

ODD_RECORDS: list[Any] = [
    [], "text", 3, None,
    {"status": ["ok"], "scores": [1, 2], "latency_s": "fast", "cost_usd": {"x": 1},
     "composite": float("inf"), "reason": {"nested": True}},
    {"status": "ok", "scores": {"j": {"value": [1, {"a": 2}], "rationale": 5, "error": []},
                                "k": "bare", "7": {"value": float("nan")}}},
]


def _runs(tmp: Path) -> Path:
    data = {(lv,): {f"c{i}": [{"q": 0.5}] for i in range(3)} for lv in ("a", "b")}
    write_native(tmp / "runs", data, ["model"], ranges={"q": [0, 1]})
    return tmp / "runs" / "demo"


def test_show_and_runs_on_odd_shaped_run_data(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    run_a, run_b = sorted(p for p in root.iterdir() if p.is_dir())
    for i, odd in enumerate(ODD_RECORDS):
        case = run_a / "cases" / f"odd{i}"
        case.mkdir()
        (case / "record.json").write_text(json.dumps(odd))
        (case / "outputs.json").write_text(json.dumps(odd))
        (case / "input.json").write_text(json.dumps(odd))
    (run_b / "run.json").write_text(json.dumps({"run_id": ["x"], "condition_id": 5,
                                                "levels": [1, 2], "replication": "two"}))
    for argv in (["runs", str(root)], ["runs", str(root), "--json"]):
        code, _, err = run_cli(*argv)
        assert code == 0, err
    for i in range(len(ODD_RECORDS)):
        for extra in ([], ["--json"]):
            code, out, err = run_cli("show", str(root), "--case", f"odd{i}", *extra)
            assert code == 0, (i, err)
    code, out, err = run_cli("show", str(root), "--case", "odd5")
    assert "unusable (list)" in out and "unusable (nan)" in out


def _within(seconds: float, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(fn(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"{getattr(fn, '__name__', fn)} still blocked after {seconds:g} s (a FIFO?)"
    return box[0]


def test_fifo_named_like_a_run_file_is_skipped_not_waited_on(tmp_path: Path) -> None:
    from eval_harness import api
    from eval_harness.analysis.loading.browse import case_across_conditions, list_runs
    from eval_harness.analysis.loading.tidy_frame import load_runs

    root = _runs(tmp_path)
    run_a = sorted(p for p in root.iterdir() if p.is_dir())[0]
    (run_a / "cases" / "c0" / "record.json").unlink()
    os.mkfifo(run_a / "cases" / "c0" / "record.json")
    os.mkfifo(root / "pairwise.json")
    os.mkfifo(run_a / "cases" / "c1" / "input.json")
    runs = _within(60, list_runs, [root])
    assert any(r.counts.get("incomplete") for r in runs)
    views = _within(60, case_across_conditions, runs, "c0")
    assert {v.status for v in views} == {"ok", "incomplete"}
    frame = _within(60, load_runs, root)
    assert "not a regular file" in json.dumps(frame.attrs.get("issues"))
    out = _within(120, lambda: api.analyze(root, output=str(tmp_path / "out")))
    assert (tmp_path / "out" / "anova.json").is_file() and out is not None


@pytest.mark.parametrize("content", [
    "{not json", "[" * 100_000 + "]" * 100_000, "[1, 2]", '{"judges": [1]}',
    '{"judges": {"j": "pairs"}}'])
def test_malformed_pairwise_file_is_unusable_not_a_crash(tmp_path: Path, content: str) -> None:
    from eval_harness.analysis.pairwise_doc import read_pairwise

    (tmp_path / "pairwise.json").write_text(content)
    doc, note = read_pairwise(tmp_path / "pairwise.json")
    assert note and (doc is None or doc["judges"] == {"j": {"model": None, "pairs": []}})


def test_malformed_pairwise_entries_are_dropped_and_the_analysis_goes_on(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    good = {"a": "x", "b": "y", "summary": {"n": 2, "wins": 1, "ties": 0, "losses": 1,
                                            "win_rate": 0.5, "sign_test_p": 1.0}}
    (root / "pairwise.json").write_text(json.dumps({"judges": {"j": {"pairs": [
        1, {"a": 1}, {"a": "x", "b": "y", "summary": {"n": "many"}},
        {"a": "x", "b": "y", "summary": {"n": 2, "wins": 1, "win_rate": 1e308}}, good]}}}))
    code, _, err = run_cli("--analyze-only", str(root), "--output", str(tmp_path / "out"))
    assert code == 0, err
    assert "4 malformed pairwise entries ignored" in err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    (kept,) = report["pairwise"]["judges"]["j"]["pairs"]
    assert kept["summary"]["wins"] == 1 and kept["a"] == "x"


def test_show_and_runs_neutralise_terminal_escapes(tmp_path: Path) -> None:
    root = _runs(tmp_path)
    run_a = sorted(p for p in root.iterdir() if p.is_dir())[0]
    evil = "\x1b[2J\x1b]0;pwned\x07 \u202eevil\u200b"
    case = run_a / "cases" / "c1"
    record = json.loads((case / "record.json").read_text())
    record["reason"] = evil
    record["scores"]["q"]["rationale"] = evil
    (case / "record.json").write_text(json.dumps(record))
    (case / "outputs.json").write_text(json.dumps({"output": f"answer {evil}"}))
    run = json.loads((run_a / "run.json").read_text())
    run["run_id"] = f"run{evil}"
    (run_a / "run.json").write_text(json.dumps(run))
    for argv in (["runs", str(root)], ["show", str(root), "--case", "c1"]):
        code, out, err = run_cli(*argv)
        assert code == 0, err
        assert "\x1b" not in out and "\u202e" not in out and "\u200b" not in out
        assert "␛[2J" in out and "<U+202E>" in out
