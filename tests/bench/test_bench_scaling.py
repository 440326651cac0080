"""bench/bench_scaling.py's verdicts on made-up timings (the benchmark itself runs by hand:
docs/performance.md)."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import bench_scaling as bs


def _result(cases: int, phases: dict[str, float], cpu_s: float, other: float = 0.0) -> Any:
    size = bs.Size("aeh", 16, cases)
    timings = {"phases": [{"path": p, "depth": p.count("/"), "cpu_s": s, "wall_s": s}
                          for p, s in phases.items()],
               "total": {"peak_rss_mib": 100.0, "unphased_cpu_s": other, "cpu_before_s": 0.3}}
    return bs.Result(size, cpu_s, cpu_s, 0, timings)


def test_a_phase_growing_faster_than_the_data_is_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    small = _result(500, {"load": 1.0, "comparisons": 1.0, "anova": 0.01, "anova/x": 0.001}, 5)
    big = _result(5000, {"load": 10.0, "comparisons": 30.0, "anova": 0.05, "anova/x": 0.1}, 50)
    flagged = bs.table("cases", [small, big], "cpu_s", 1.5, 0.2)
    out = capsys.readouterr().out
    assert flagged == ["cases: comparisons x3.00"]  # load is linear; anova/x is too short
    assert "SUPERLINEAR" in out and "small" in out
    load = next(line for line in out.splitlines() if line.startswith("load "))
    assert load.split() == ["load", "0.1250", "0.1250", "1.00x"]  # 1 s / 8,000 samples
    assert "\n  x " in out  # nested phases indented
    assert "\n(start-up, config) " in out


def test_time_outside_every_phase_is_judged_too(capsys: pytest.CaptureFixture[str]) -> None:
    """An uninstrumented step that grows shows up as (other)."""
    small = _result(500, {"load": 1.0}, 5, other=0.1)
    big = _result(5000, {"load": 10.0}, 50, other=10.0)
    assert bs.table("cases", [small, big], "cpu_s", 1.5, 0.2) == ["cases: (other) x10.00"]
    capsys.readouterr()


def test_tags_whose_cost_grows_with_size_are_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    plain = [_result(500, {"load": 1.0}, 10), _result(5000, {"load": 10.0}, 100)]
    tagged = [_result(500, {"load": 1.0}, 12), _result(5000, {"load": 10.0}, 300)]
    assert bs.tag_ratio(plain, tagged, 1.5) == ["tags: with/without ratio x2.50"]
    linear = [_result(500, {"load": 1.0}, 12), _result(5000, {"load": 10.0}, 120)]
    assert bs.tag_ratio(plain, linear, 1.5) == []
    capsys.readouterr()


def test_the_million_size_has_at_least_a_million_judge_values() -> None:
    conditions, cases, reps = bs.MILLION
    assert bs.Size("aeh", conditions, cases, reps).samples * 2 == 1_000_032  # 2 judges, >= 1M


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_process_tree_rss_is_read_from_proc() -> None:
    assert bs._tree_rss_mib(os.getpid()) > 1


def test_the_missing_series_sends_auto_to_the_mixed_model(tmp_path: Any) -> None:
    """Its run sets miss cells, so the analysis measured is the mixed-model path."""
    import json

    size = bs.Size("aeh", 4, 40, missing=0.1)
    assert size.samples == 144 and size.label == "4x40x1-0.1"
    assert size.folder != bs.Size("aeh", 4, 40).folder  # kept run sets are not mixed up
    root = bs.dataset(size, None, tmp_path)
    res = bs.analyse(size, root)
    assert res.exit_code in (0, 1) and res.seconds("anova", "cpu_s") is not None
    anova = json.loads((root / "out" / "anova.json").read_text())
    assert anova["method"]["name"] == "mixed" and anova["method"]["requested"] == "auto"
