"""Attack (issue 28): NaN / ±inf / 1e308 judge values in run data or from a judge. They
must be errored samples with a reason; analysis, charts and reports never see them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from eval_harness.judges.values import JudgeFailure, classify
from tests.conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from rundir_writer import write_native

HOSTILE = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308]


@pytest.mark.parametrize("value", [1e308, -1e200, 1e151])
def test_judge_returning_a_huge_number_is_an_error(value: float) -> None:
    with pytest.raises(JudgeFailure, match="too large"):
        classify(value, (-1e308, 1e308))


def test_hostile_values_in_records_are_errored_and_never_reach_reports(tmp_path: Path) -> None:
    data = {(lv,): {f"c{i}": [{"q": HOSTILE[i] if i < 5 and lv == "a" else 0.4 + 0.1 * (i % 3),
                               "ok": i % 2 == 0}] for i in range(8)} for lv in ("a", "b")}
    write_native(tmp_path / "runs", data, ["model"], ranges={"q": [0, 1]})
    out = tmp_path / "out"
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output", str(out),
                           "--per-judge")
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert "beyond ±1e150" in json.dumps(report, ensure_ascii=False)
    anova = json.loads((out / "anova.json").read_text())
    assert anova["errored_samples"]["count"] == 5
    # the data note names the bad values (in every file); nothing else may show one
    note = re.compile(r"judge value\(s\) are Infinity, NaN, beyond[^\"<\n]*")
    for name in ("report.md", "report.html", "anova.json", "report.json"):
        body = note.sub("", (out / name).read_text())
        assert not re.search(r"\b(inf|Infinity|NaN|[-\d.]+e\+?(30\d|1[5-9]\d|2\d\d))\b",
                             body), name
