"""--dry-run's price-table estimate: from prompt length first, measured tokens after a run."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
from cost_helpers import records, write_cost_eval

JUDGES = [{"name": "quality", "prompt": "Rate {{ outputs.output }}.", "score_range": [1, 5],
           "model": "openai:gpt-4.1-nano"}]


def _dry(cli, cfg: Path, runs: Path) -> dict:
    code, out, err = cli("--config", str(cfg), "--runs-dir", str(runs), "--dry-run", "--json")
    assert code == 0, err
    return json.loads(out)["estimate"]


def test_estimate_per_condition_and_judge_then_measured_equals_actual(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing, n_cases=4, judges=JUDGES)
    runs = tmp_path / "runs"
    est = _dry(cli, cfg, runs)
    table = est["table"]
    assert est["cost_kind"] == "point" and est["cost_source"].startswith("price table")
    assert [c["tokens"] for c in table["conditions"]] == ["prompt length"] * 2
    for row in table["conditions"]:
        assert row["runs"] == 4 and row["price"] == "config"
        # "case: c00 plain" is 15 characters: 4 tokens in; replies of 256 (point) / 600 (cap)
        assert abs(row["point_usd"] - 4 * (4 * 5 + 256 * 10) / 1e6) < 1e-4
        assert abs(row["upper_usd"] - 4 * (4 * 5 + 600 * 10) / 1e6) < 1e-4
    judge = table["judges"][0]
    assert judge["calls"] == 8 and judge["price"] == "table:2025-11-01"
    assert 0 < table["judges_share"] < 1 and est["upper_bound_usd"] == table["upper_usd"]
    assert _run_ok(cli, cfg, runs)
    actual = sum(r["cost_usd"] + r["scores"]["quality"]["cost_usd"]
                 for r in records(runs / "cost").values())
    est = _dry(cli, cfg, runs)
    assert {c["tokens"] for c in est["table"]["conditions"]} == {"measured over 4 records"}
    assert abs(est["cost_usd"] - actual) < 1e-9  # the stub bills the same every call


def _run_ok(cli, cfg: Path, runs: Path) -> bool:
    code, _, _ = cli("--config", str(cfg), "--runs-dir", str(runs), "--no-analysis",
                     "--no-judge-check")
    return code == 0


def test_unpriced_model_is_named_and_console_shows_the_table(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing, n_cases=2, judges=JUDGES,
                          factors={"model": ["stub-model", "no-such-model"],
                                   "tone": ["plain"]})
    code, out, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "r"), "--dry-run")
    assert code == 0, err
    assert "cost by price table (2025-11-01)" in out and "judges' share" in out
    assert "no price for no-such-model" in out
