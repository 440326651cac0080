"""The bundled example runs through the real CLI path (real agent, real judges), offline."""
from __future__ import annotations

import json
from pathlib import Path

from runner_helpers import REPO


def test_example_runs_end_to_end_with_its_judges(tmp_path: Path, cli) -> None:
    runs = tmp_path / "runs"
    code, _, err = cli("--config", str(REPO / "configs" / "example.yaml"), "--runs-dir", str(runs),
                       "--limit", "1", "--no-judge-check", "--no-analysis", "--concurrency", "4")
    assert code == 0, err
    recs = [json.loads(p.read_text()) for p in runs.glob("example/*/cases/*/record.json")]
    assert len(recs) == 8 * 1 * 2
    for rec in recs:
        assert rec["status"] == "ok", rec
        assert set(rec["scores"]) == {"correct", "explanation", "tool_budget", "fast"}
        assert rec["cost_usd"] > 0 and rec["tokens"] > 0 and rec["tool_calls"] is not None
        assert 0.0 <= rec["composite"] <= 1.0
    docs = [r["tool_calls"] for r in recs if r["levels"]["context"] == "docs"]
    none = [r["tool_calls"] for r in recs if r["levels"]["context"] == "none"]
    assert min(docs) >= 1 and min(none) == 0  # docs make the agent search
