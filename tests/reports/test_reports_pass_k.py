"""pass@k / pass^k in report.json (per condition and per case cell) and the Conditions
table, for the fixture run set (3 replications)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_harness.analysis.stats.passk import condition_pass_k
from eval_harness.reports.tables import matrix_table


def test_conditions_and_cells_carry_pass_k(written: dict[str, Path]) -> None:
    doc = json.loads(written["json"].read_text(encoding="utf-8"))
    cases = doc["case_grid"]["cases"]
    for cond in doc["conditions"]:
        cells = [c["cells"][cond["condition_id"]] for c in cases if cond["condition_id"] in c["cells"]]
        # the condition's value is the mean of its cells' own estimates (n = usable attempts)
        want = condition_pass_k([c["attempts"] for c in cells], [c["passes"] for c in cells], 3)
        assert cond["pass_k"]["k"] == [1, 2, 3]
        assert cond["pass_k"]["pass_at_k"] == pytest.approx(want["pass_at_k"])
        assert cond["pass_k"]["pass_hat_k"] == pytest.approx(want["pass_hat_k"])
        # k = 1 is the mean per-case pass rate; over one set of cases pass@k rises with k
        # and pass^k falls (a case with fewer usable attempts leaves the larger k's mean)
        at, hat = cond["pass_k"]["pass_at_k"], cond["pass_k"]["pass_hat_k"]
        assert at[0] == hat[0]
        if len(set(cond["pass_k"]["n_cases"])) == 1:
            assert at == sorted(at) and hat == sorted(hat, reverse=True)
        for cell in cells:
            assert len(cell["pass_at_k"]) == 3


def test_table_columns_only_with_replications(written: dict[str, Path]) -> None:
    doc = json.loads(written["json"].read_text(encoding="utf-8"))
    assert {"pass@3", "pass^3"} <= set(matrix_table(doc).columns)
    for c in doc["conditions"]:
        c.pop("pass_k")
    assert not any(col.startswith("pass@") for col in matrix_table(doc).columns)
