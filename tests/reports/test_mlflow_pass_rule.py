"""Issue 37: MLflow's ``pass_rate`` metric counted composite >= 0.5 — a second pass rule
beside the reports'. It is now the analysis' pass rule (by default every boolean judge a
requirement), so a wrong answer beside an always-true judge is a failure there too."""

from __future__ import annotations

import pandas as pd

from eval_harness.analysis.compare.verdicts import VerdictRule, sample_table
from eval_harness.reports.mlflow_log import condition_metrics


def _frame() -> pd.DataFrame:
    rows = []
    for case, right in (("k1", True), ("k2", False)):
        base = {"condition_id": "c", "run_id": "r", "replication": 1, "case_id": case,
                "errored": False, "case_status": "ok", "case_hash": "h"}
        rows += [{**base, "judge": "close", "kind": "boolean", "value": float(right),
                  "normalized": float(right)},
                 {**base, "judge": "nonempty", "kind": "boolean", "value": 1.0,
                  "normalized": 1.0},
                 {**base, "judge": "composite", "kind": "composite",
                  "value": 1.0 if right else 0.5, "normalized": 1.0 if right else 0.5}]
    return pd.DataFrame(rows)


def test_the_mlflow_pass_rate_follows_the_pass_rule() -> None:
    frame = _frame()
    assert condition_metrics(frame)["pass_rate"] == 0.5  # the wrong answer fails
    composite = sample_table(frame, VerdictRule(rule="composite"))
    assert condition_metrics(frame, composite)["pass_rate"] == 1.0  # as written, if asked
