"""bench/scale_data.py: the AEH-layout run set and its eval.yaml make this tool score the
runs exactly as agent-eval-harness does, so bench_vs_aeh.py compares the same analysis."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from eval_harness.analysis.loading.tidy_frame import load_runs
from eval_harness.config.loader import load_config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scale_data


def _aeh_rule(per_case: dict) -> dict[str, float]:
    """agent-eval-harness's composite without a ``reward:`` block (harbor/reward.py
    compose_reward): a false boolean makes the case 0, else the mean of the numeric judges
    normalised over [1, 5]."""
    out = {}
    for case, judges in per_case.items():
        gate = all(j["value"] for j in judges.values() if isinstance(j["value"], bool))
        nums = [(j["value"] - 1) / 4 for j in judges.values()
                if not isinstance(j["value"], bool)]
        out[case] = float(np.mean(nums)) if gate else 0.0
    return out


@pytest.mark.parametrize("judges", [2, 3])
def test_aeh_config_scores_with_agent_eval_harness_rule(tmp_path: Path, judges: int) -> None:
    scale_data.write_runs(str(tmp_path), "aeh", 4, 30, 2, judges=judges)
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(scale_data.config_text(4, judges, 2, layout="aeh"))
    frame = load_runs(tmp_path / "bench", judge_specs=load_config(cfg, strict=False).config)
    comp = frame[frame["judge"] == "composite"]
    assert len(comp) == 4 * 30 * 2 and not comp["errored"].any()
    expected: dict[tuple[str, str], float] = {}
    for run in sorted((tmp_path / "bench").iterdir()):
        per_case = yaml.safe_load((run / "summary.yaml").read_text())["per_case"]
        expected.update({(run.name, c): v for c, v in _aeh_rule(per_case).items()})
    got = {(r, c): v for r, c, v in zip(comp["run_id"], comp["case_id"], comp["value"],
                                        strict=True)}
    assert got.keys() == expected.keys()
    assert max(abs(got[k] - expected[k]) for k in got) < 1e-12
    # some gates fail and some pass, so the rule (not a constant) is what is checked
    assert 0 < sum(v == 0 for v in expected.values()) < len(expected)


def test_native_config_keeps_the_gate_its_records_were_written_with() -> None:
    assert "gate: true" in scale_data.config_text(4, 2, 1, layout="native")
    assert "gate" not in scale_data.config_text(4, 2, 1, layout="aeh")
