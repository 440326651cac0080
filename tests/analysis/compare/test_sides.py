"""SideTable alignment, statuses in priority order, and the grouped Wilson / Fisher values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.compare import distinct_rows
from eval_harness.analysis.compare.distinct_rows import unique_rows, unique_sorted
from eval_harness.analysis.compare.fisher import fisher_exact_two_sided
from eval_harness.analysis.compare.sides import (
    SideTable,
    fisher_p_values,
    statuses,
    wilson_intervals,
)
from eval_harness.analysis.compare.wilson import wilson_interval


def _cases(rows: dict[str, tuple[int, int, str, str, str]]) -> pd.DataFrame:
    """case -> (n_usable, n_pass, verdict, case_hashes, judges)."""
    out: list[dict[str, Any]] = []
    for case, (n, k, verdict, hashes, judges) in rows.items():
        out.append({"case_id": case, "n_attempts": max(n, 1), "n_errored": 0 if n else 1,
                    "n_usable": n, "n_pass": k, "pass_rate": k / n if n else np.nan,
                    "verdict": verdict, "composite_mean": k / n if n else np.nan,
                    "case_hashes": hashes, "judges": judges})
    return pd.DataFrame(out)


def test_statuses_follow_the_documented_priority() -> None:
    ref = SideTable(_cases({
        "a": (2, 2, "passed", "h1", "j"), "b": (0, 0, "errored", "h1", "j"),
        "c": (1, 0, "unscored", "h1", "j"), "d": (2, 1, "flaky", "h1", "j"),
        "e": (2, 1, "flaky", "h1", "j"), "f": (2, 2, "passed", "", "j"),
        "g": (2, 0, "failed", "h1", "j"), "r": (1, 1, "passed", "h1", "j")}))
    cand = SideTable(_cases({
        "a": (2, 2, "passed", "h1", "j"), "b": (0, 0, "errored", "h2", "k"),
        "c": (0, 0, "errored", "h2", "j"), "d": (2, 1, "flaky", "h2", "k"),
        "e": (2, 1, "flaky", "h1", "k"), "f": (2, 0, "failed", "h9", "j"),
        "g": (1, 1, "passed", "h1", "j"), "n": (1, 1, "passed", "h1", "j")}))
    ids = sorted(set(ref.index) | set(cand.index))
    status, reasons = statuses(ref, cand, ref.positions(ids), cand.positions(ids))
    got = dict(zip(ids, zip(status.tolist(), reasons, strict=True), strict=True))
    assert got == {
        "a": ("compared", ""),
        "b": ("errored", "no usable attempt: reference and candidate"),  # beats modified
        "c": ("errored", "no usable attempt: candidate"),  # beats unscored
        "d": ("modified", "case_hash changed"),  # hash checked before judges
        "e": ("modified", "judges changed (j -> k)"),
        "f": ("compared", ""),  # an empty hash on one side is not a change
        "g": ("compared", ""),
        "n": ("new", ""),
        "r": ("removed", ""),
    }
    blocks = cand.side_blocks(cand.positions(["g", "r"]))
    assert blocks[1] is None
    assert blocks[0] == {"n_attempts": 1, "n_errored": 0, "n": 1, "passes": 1,
                         "pass_rate": 1.0, "wilson_ci": list(wilson_interval(1, 1)),
                         "verdict": "passed", "composite_mean": 1.0, "case_hash": "h1"}


@pytest.mark.parametrize("max_key", [2**62, 4])  # 4: the row-wise fallback
def test_grouped_wilson_and_fisher_equal_the_scalar_functions(
        monkeypatch: pytest.MonkeyPatch, max_key: int) -> None:
    monkeypatch.setattr(distinct_rows, "_MAX_KEY", max_key)
    rng = np.random.default_rng(1)
    n_a, n_b = rng.integers(1, 6, size=300), rng.integers(0, 4, size=300)
    k_a, k_b = rng.binomial(n_a, 0.5), rng.binomial(n_b, 0.7)
    lo, hi = wilson_intervals(k_b, n_b)
    for i in range(300):
        expected = wilson_interval(int(k_b[i]), int(n_b[i]))
        assert np.array_equal([lo[i], hi[i]], expected, equal_nan=True)
    p = fisher_p_values(k_a, n_a, k_b, n_b)
    assert p.tolist() == [fisher_exact_two_sided(int(a), int(b), int(c), int(d))
                          for a, b, c, d in zip(k_a, n_a, k_b, n_b, strict=True)]
    rows, inverse = unique_rows(k_a, n_a)
    assert rows == sorted(set(zip(k_a.tolist(), n_a.tolist(), strict=True)))
    assert [rows[i] for i in inverse] == list(zip(k_a.tolist(), n_a.tolist(), strict=True))


def test_unique_sorted_is_np_unique() -> None:
    values = np.random.default_rng(2).integers(-5, 50, size=1_000)
    assert np.array_equal(unique_sorted(values), np.unique(values))
    assert unique_sorted(np.empty(0, dtype=np.int64)).size == 0
