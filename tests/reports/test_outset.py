"""Attack (issue 28): concurrent analyses into one output folder, and analyses killed
mid-way. A reader (opening the folder once) never sees files of two analyses side by
side, no analysis fails, and no ``*.tmp`` is left in the output folder."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from rundir_writer import write_native


def _runs(tmp: Path, n_cases: int) -> Path:
    data = {(lv,): {f"c{i}": [{"q": 0.2 + 0.1 * ((i + k) % 5)}] for i in range(n_cases)}
            for k, lv in enumerate(("a", "b"))}
    write_native(tmp / f"runs{n_cases}", data, ["model"], ranges={"q": [0, 1]})
    return tmp / f"runs{n_cases}"


def _analyse(root: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(ROOT / "orchestrate.py"), "--analyze-only",
                             str(root), "--output", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _read_set(out: Path) -> tuple[int, int] | None:
    """(anova n_cases, report n_cases) read through one open of the folder."""
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        def load(name: str) -> dict:
            with os.fdopen(os.open(name, os.O_RDONLY, dir_fd=fd), encoding="utf-8") as fh:
                return json.load(fh)
        anova, report = load("anova.json"), load("report.json")
    except (OSError, ValueError):  # the set was replaced meanwhile: gone, never mixed
        return None
    finally:
        os.close(fd)
    return anova["design"]["n_cases"], report["design"]["n_cases"]


def _in_process(root: Path, out: Path, errors: list[BaseException]) -> None:
    from eval_harness import api

    try:
        api.analyze(root, output=str(out))
    except BaseException as exc:  # reported by the test
        errors.append(exc)


def test_concurrent_analyses_into_one_folder_never_mix(tmp_path: Path) -> None:
    out = tmp_path / "analysis" / "demo"
    errors: list[BaseException] = []
    roots = [_runs(tmp_path, n) for n in (3, 4, 5)]
    _in_process(roots[0], tmp_path / "warm", errors)  # imports done before the race
    threads = [threading.Thread(target=_in_process, args=(r, out, errors)) for r in roots]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        pair = _read_set(out)
        assert pair is None or pair[0] == pair[1], pair  # anova.json, report.json: one analysis
        time.sleep(0.005)
    assert not errors, errors
    final = _read_set(out)
    assert final is not None and final[0] == final[1] and final[0] in (3, 4, 5)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]


def test_killed_analyses_leave_a_whole_set_and_no_tmp(tmp_path: Path) -> None:
    out = tmp_path / "analysis" / "demo"
    root3, root5 = _runs(tmp_path, 3), _runs(tmp_path, 5)
    errors: list[BaseException] = []
    _in_process(root3, out, errors)
    rng = random.Random(28)
    for _ in range(2):
        p = _analyse(root5, out)
        time.sleep(rng.uniform(0.3, 1.5))  # a random instant, often mid-analysis
        p.send_signal(signal.SIGKILL)
        p.wait()
        pair = _read_set(out)
        assert pair is not None and pair[0] == pair[1], pair  # the old set or the new one
        assert not [q for q in out.iterdir() if q.name.endswith(".tmp")]
    _in_process(root5, out, errors)
    assert not errors, errors
    assert _read_set(out) == (5, 5)
    assert not [q for q in out.parent.iterdir() if q.name.endswith(".tmp")]  # swept


def test_a_folder_with_foreign_files_is_never_swapped_away(tmp_path: Path) -> None:
    from eval_harness.reports.outset import OutputSet

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    outset = OutputSet(out)
    (outset.path / "anova.json").write_text("{}")
    outset.commit()
    assert (out / "notes.txt").read_text() == "keep me" and (out / "anova.json").is_file()
    assert not outset.path.exists()
