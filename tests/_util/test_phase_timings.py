"""eval_harness._util.phase_timings: phases nest and accumulate, numbers are real, off costs nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from eval_harness._util import phase_timings
from eval_harness._util.phase_timings import phase, recording
from tests.conftest import ROOT


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_off_by_default_is_one_shared_no_op() -> None:
    assert phase_timings._ACTIVE is None
    assert phase("a") is phase("b")  # no recorder, no allocation: the same null context
    with phase("a"):
        pass
    with recording(False) as rec:
        assert rec is None and phase("x") is phase("y")


def test_phases_nest_accumulate_and_measure_cpu_and_wall() -> None:
    with recording() as rec:
        assert rec is not None
        with phase("outer"):
            with phase("inner"):
                _busy(0.05)
            with phase("inner"):
                _busy(0.05)
        with phase("sleep"):
            time.sleep(0.05)
    assert phase_timings._ACTIVE is None  # restored on exit
    doc = rec.to_dict()
    by_path = {p["path"]: p for p in doc["phases"]}
    assert list(by_path) == ["outer", "outer/inner", "sleep"]  # first-entry order
    assert by_path["outer/inner"]["calls"] == 2 and by_path["outer/inner"]["depth"] == 1
    assert by_path["outer/inner"]["cpu_s"] >= 0.09
    assert by_path["outer"]["cpu_s"] >= by_path["outer/inner"]["cpu_s"]
    assert by_path["sleep"]["wall_s"] >= 0.045 and by_path["sleep"]["cpu_s"] < 0.04
    total = doc["total"]
    assert total["wall_s"] >= by_path["outer"]["wall_s"] + by_path["sleep"]["wall_s"]
    assert total["cpu_s"] >= 0.09 and total["peak_rss_mib"] > 0
    assert total["cpu_before_s"] > 0  # this interpreter ran before the recording began
    for p in doc["phases"]:
        assert min(p["wall_s"], p["cpu_s"], p["peak_rss_delta_mib"]) >= 0
    table = rec.table()
    assert "  inner x2" in table and "\ntotal " in table and "(other)" in table
    assert "(before the clock" in table


def test_a_phase_that_raises_is_still_recorded() -> None:
    with recording() as rec:
        try:
            with phase("boom"):
                raise ValueError
        except ValueError:
            pass
        with phase("after"):
            pass
    assert rec is not None
    assert [p["path"] for p in rec.to_dict()["phases"]] == ["boom", "after"]  # not nested


def test_other_threads_do_not_record() -> None:
    with recording() as rec:
        worker = threading.Thread(target=lambda: phase("elsewhere").__enter__())
        worker.start()
        worker.join()
        with phase("here"):
            pass
    assert rec is not None and list(rec.phases) == ["here"]


def test_peak_rss_growth_is_attributed_to_the_phase_that_allocates(tmp_path: Path) -> None:
    """In a fresh interpreter (low peak), a phase touching 64 MiB raises the peak by about
    that much; a later phase that allocates less than the peak adds nothing."""
    script = f"""
import sys; sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
from eval_harness._util.phase_timings import phase, recording
with recording() as rec:
    with phase("big"):
        block = bytes(range(256)) * (64 * 1024 * 1024 // 256)
        del block
    with phase("small"):
        block = bytes(range(256)) * (1024 * 1024 // 256)
rec.write_json(Path({str(tmp_path / "t.json")!r}))
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    doc = json.loads((tmp_path / "t.json").read_text())
    delta = {p["name"]: p["peak_rss_delta_mib"] for p in doc["phases"]}
    assert 56 <= delta["big"] <= 80, delta
    assert delta["small"] < 1, delta
    assert doc["total"]["peak_rss_mib"] >= 64
