"""Reading run files in worker processes: the same frame, order, notes and errors as in one
process, for agent-eval-harness and native layouts."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from rundir_writer import write_aeh, write_native

from eval_harness.aeh import summary_chunk
from eval_harness.analysis.loading import tidy_frame
from eval_harness.analysis.loading.tidy_frame import load_runs

BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
SPECS = {"ok": {"gate": True}, "q": {"score_range": [1, 5]}}


def _aeh_runs(root: Path) -> Path:
    data = {
        (m, e): {f"c{i}": [{"ok": (i + r) % 3 != 0, "q": 1 + (i * 7 + r + len(m + e)) % 5}
                           for r in range(2)] for i in range(30)}
        for m in ("m1", "m2") for e in ("lo", "hi")
    }
    write_aeh(root, data, ["model", "effort"])
    return root


def _broken(root: Path) -> None:
    """Runs every reader must report the same way: bad YAML, an alias bomb, no levels,
    a malformed judge entry."""
    for name, text in {
        "2026-07-30-bad-yaml": "per_case: {c1: [unclosed\n",
        "2026-07-30-bomb": BOMB + "per_case: {c0: {ok: {value: *i}}}\n",
        "2026-07-30-dup-key": "per_case: {}\nper_case: {}\n",
    }.items():
        (root / name).mkdir()
        (root / name / "summary.yaml").write_text(text)
    odd = root / "2026-07-30-c0-run1"
    summary = yaml.safe_load((odd / "summary.yaml").read_text())
    summary["per_case"]["c3"]["q"]["score_range"] = ["low", "high"]
    (odd / "summary.yaml").write_text(yaml.safe_dump(summary))


def _attrs(df: pd.DataFrame) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
            for k, v in df.attrs.items()}


@pytest.mark.parametrize("specs", [None, SPECS])
def test_aeh_runs_in_workers_give_the_same_frame_and_notes(
        tmp_path: Path, specs: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _aeh_runs(tmp_path / "runs")
    _broken(root)
    pools: list[int] = []

    def pool(max_workers: int, **kw: Any) -> ProcessPoolExecutor:
        pools.append(max_workers)
        return ProcessPoolExecutor(max_workers, **kw)

    monkeypatch.setattr(tidy_frame, "ProcessPoolExecutor", pool)
    serial = load_runs(root, judge_specs=specs, workers=1)
    assert pools == []
    for workers in (2, 3):
        parallel = load_runs(root, judge_specs=specs, workers=workers)
        pd.testing.assert_frame_equal(serial, parallel, check_exact=True)
        assert _attrs(parallel) == _attrs(serial)
    assert pools == [2, 3]
    kinds = [i["kind"] for i in serial.attrs["issues"]]
    details = " ".join(i["detail"] for i in serial.attrs["issues"])
    assert kinds.count("unreadable_run") == 3 and "alias bomb" in details
    assert "duplicate key 'per_case' (lines 1 and 2)" in details
    # the recorded range is read only without a config range for the judge
    malformed = "case c3: malformed judge entry (ValueError" in details
    assert malformed is (specs is None)
    assert len(serial[serial["judge"] == "composite"]) == 8 * 30 - malformed


def test_copies_of_aeh_runs_are_duplicates_and_conflicts_in_workers(tmp_path: Path) -> None:
    root = _aeh_runs(tmp_path / "a")
    other = tmp_path / "b"
    shutil.copytree(root, other)
    changed = other / "2026-07-30-c1-run2" / "summary.yaml"
    summary = yaml.safe_load(changed.read_text())
    summary["per_case"]["c5"]["q"]["value"] = 5 if summary["per_case"]["c5"]["q"]["value"] != 5 else 4
    changed.write_text(yaml.safe_dump(summary))
    frames = [load_runs([root, other], judge_specs=SPECS, workers=w) for w in (1, 2)]
    pd.testing.assert_frame_equal(*frames, check_exact=True)
    assert _attrs(frames[0]) == _attrs(frames[1])
    issues = frames[0].attrs["issues"]
    assert sum(i["count"] for i in issues if i["kind"] == "duplicate") == 8 * 30 - 1
    conflicts = [i for i in issues if i["kind"] == "conflict"]
    assert len(conflicts) == 1 and conflicts[0]["cases"] == ["c5"]
    assert len(frames[0]) == len(load_runs(root, judge_specs=SPECS))


def test_native_runs_in_workers_give_the_same_frame(tmp_path: Path) -> None:
    data = {(m,): {f"c{i}": [{"ok": i % 2 == 0, "q": 1 + i % 5}] for i in range(5)}
            for m in ("m1", "m2", "m3")}
    write_native(tmp_path / "runs", data, ["model"], ranges={"q": [1, 5]})
    frames = [load_runs(tmp_path / "runs", workers=w) for w in (1, 2)]
    pd.testing.assert_frame_equal(*frames, check_exact=True)
    assert _attrs(frames[0]) == _attrs(frames[1])


def _reader_bug(*args: Any) -> Any:
    raise RuntimeError(f"reader bug on {Path(args[0]).name}")


def test_an_unexpected_error_in_a_worker_is_raised_as_in_one_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _aeh_runs(tmp_path / "runs")
    monkeypatch.setattr(summary_chunk, "read_aeh_chunk", _reader_bug)
    messages = []
    for workers in (1, 2):
        with pytest.raises(RuntimeError) as info:
            load_runs(root, workers=workers)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "reader bug on 2026-07-30-c0-run1"


def test_workers_are_used_only_for_large_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tidy_frame, "_cpus", lambda: 2)
    auto = tidy_frame._Workers(None)
    assert auto.count(48, large=True) == 2 and auto.count(48, large=False) == 1
    assert auto.count(3, large=True) == 1  # two runs per worker at least
    assert tidy_frame._Workers(1).count(48, large=True) == 1
    assert tidy_frame._Workers(3).count(2, large=False) == 2


_PARENT = """
import sys, time
from eval_harness.analysis.loading.tidy_frame import _Workers
pool = _Workers(2)
assert list(pool.map(abs, [(-1,), (-2,), (-3,), (-4,)], 2)) == [1, 2, 3, 4]  # the pool is up
busy = [pool.pool.submit(time.sleep, 600) for _ in range(2)]
print(" ".join(str(pid) for pid in pool.pool._processes), flush=True)
busy[0].result()
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_parse_workers_die_with_a_killed_parent() -> None:
    """Attack (issue 28): SIGKILL of --analyze-only left its parse workers running."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30  # generous: a loaded machine; they die at once
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for p in left:  # never leave them behind, even when the test fails
        os.kill(p, signal.SIGKILL)
    assert not left
