"""One ``--condition`` matcher (matrix.select) for running and browsing: levels, an id
prefix, or a condition label (browsing used to refuse the label)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_harness.analysis.loading.browse import RunInfo, select_runs
from eval_harness.errors import UsageError
from eval_harness.matrix.builder import make_condition
from eval_harness.matrix.experiment import select_conditions

LEVELS = [{"model": m, "effort": e} for m in ("small", "large") for e in ("low", "high")]


def _runs() -> list[RunInfo]:
    return [RunInfo(path=Path(f"/r/{i}"), run_id=str(i), condition_id=c.condition_id,
                    levels=dict(c.levels), replication=1, status="complete", counts={})
            for i, c in enumerate(make_condition(lv) for lv in LEVELS)]


@pytest.mark.parametrize("spec", ["model=small", "model=large,effort=high",
                                  "small-effort-low", "large-effort-high"])
def test_running_and_browsing_pick_the_same_conditions(spec: str) -> None:
    conditions = [make_condition(lv) for lv in LEVELS]
    ran = [c.condition_id for c in select_conditions(conditions, [spec])]
    browsed = [r.condition_id for r in select_runs(_runs(), [spec])]
    assert ran == browsed and ran


def test_an_id_prefix_and_the_errors_are_shared() -> None:
    conditions = [make_condition(lv) for lv in LEVELS]
    prefix = conditions[2].condition_id[:6]
    assert [c.condition_id for c in select_conditions(conditions, [prefix])] == \
        [r.condition_id for r in select_runs(_runs(), [prefix])]
    for pick in (lambda s: select_conditions(conditions, s), lambda s: select_runs(_runs(), s)):
        with pytest.raises(UsageError, match="unknown factor"):
            pick(["size=small"])
        with pytest.raises(UsageError, match="bad --condition part"):
            pick(["model=small,large"])
