"""bench/bench_type1.py: the resumable table of rejection rates (fast), and a reduced
version of the full run (slow: --run-slow): 400 seeded null simulations of the
incomplete-data scenarios, the default's rate within ±3 binomial SE of 5 %."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_type1


def test_results_file_resumes_and_table_reports_wilson_intervals(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    bench_type1.run(["ab2"], 3, 23, results, workers=1)
    first = results.read_text().splitlines()
    bench_type1.run(["ab2"], 4, 23, results, workers=1)  # only the 4th is computed
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert results.read_text().splitlines()[:3] == first and sorted(r["i"] for r in rows) == [0, 1, 2, 3]
    text, _ = bench_type1.table(rows, ["ab2"], 4)
    assert "100 % excluded" in text  # 2 cases with a missing cell: saturated, never tested
    lo, hi = bench_type1.wilson(5, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.0215, 0.1118)  # Wilson 5/100


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["irt3", "ab12", "ab24", "mar"])
def test_default_holds_the_nominal_rate_on_incomplete_data(tmp_path: Path, scenario: str) -> None:
    n = 400
    results = tmp_path / "r.jsonl"
    bench_type1.run([scenario], n, 23, results, workers=2)
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    band = 3 * math.sqrt(0.05 * 0.95 / n)
    for term in {t for r in rows for t in r["auto"].get("p", {})}:
        ps = [r["auto"]["p"][t] for r in rows for t in [term] if t in r["auto"].get("p", {})]
        rate = sum(p < 0.05 for p in ps) / len(ps)
        assert abs(rate - 0.05) <= band, (scenario, term, rate)
