"""Issue 22: one always-erroring judge wiped the composite of every sample, even with
--allow-errored-judges ("4 conditions × 0 cases", no ANOVA, although another judge had
120 good values). Now it is dropped from the composite (weights renormalised) and named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rundir_writer import write_native

CONFIG = """\
name: demo
matrix:
  factors:
    model: [m1, m2]
    effort: [low, high]
judges:
  - name: q
    check: 'return 1, ""'
    score_range: [0, 10]
    weight: 3
  - name: broken
    check: 'return True, ""'
"""


def _setup(tmp: Path) -> tuple[Path, Path]:
    data = {(m, e): {f"c{i}": [{"q": float((3 * i + 4 * (m == "m2") + (e == "high")) % 11),
                                "broken": "ERR"}] for i in range(30)}
            for m in ("m1", "m2") for e in ("low", "high")}
    write_native(tmp / "runs", data, ["model", "effort"], ranges={"q": [0, 10]})
    cfg = tmp / "eval.yaml"
    cfg.write_text(CONFIG)
    return tmp / "runs" / "demo", cfg


def test_without_the_flag_exit_4_says_what_the_flag_does(tmp_path: Path) -> None:
    runs, cfg = _setup(tmp_path)
    code, _, err = run_cli("--analyze-only", str(runs), "--config", str(cfg), "--output",
                           str(tmp_path / "a"))
    assert code == 4, err
    assert "--allow-errored-judges to drop it from the composite" in err


def test_with_the_flag_the_dead_judge_is_dropped_and_named(tmp_path: Path) -> None:
    runs, cfg = _setup(tmp_path)
    code, _, err = run_cli("--analyze-only", str(runs), "--config", str(cfg), "--output",
                           str(tmp_path / "b"), "--allow-errored-judges")
    assert code == 0, err
    assert "judge(s) `broken` errored on every sample: dropped from the composite" in err
    anova = json.loads((tmp_path / "b" / "anova.json").read_text())
    assert anova["design"]["n_cases"] == 30  # main: 0 cases, no terms
    assert set(anova["terms"]) == {"model", "effort", "model:effort"}
    assert [d["judge"] for d in anova["dropped_judges"]] == ["broken"]
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    # composite = q / 10 alone (weight 3 renormalised to 1)
    means = {c["label"]: c["mean"] for c in report["conditions"]}
    expected = sum((3 * i) % 11 for i in range(30)) / 300
    assert abs(means["model=m1, effort=low"] - expected) < 1e-9
