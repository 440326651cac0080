"""Shards partition the matrix (condition-balanced); the interleaved order is seeded."""
from __future__ import annotations

from collections import Counter

import pytest

from eval_harness.config.dataset import Case
from eval_harness.errors import UsageError
from eval_harness.matrix.builder import make_condition
from eval_harness.runner.plan import all_cells, interleave, make_plan
from eval_harness.runner.shard import Shard, parse_shard
from eval_harness.store.index import ResumeIndex

CONDS = [make_condition({"model": m, "effort": e}) for m in ("a", "b") for e in ("lo", "hi", "x")]
CASES = [Case(f"c{i:02d}", {"q": i}) for i in range(10)]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40, 61])
def test_shards_partition_and_balance(n: int) -> None:
    full = {c.key for c in all_cells(CONDS, CASES, 2)}
    parts = [all_cells(CONDS, CASES, 2, Shard(k, n)) for k in range(1, n + 1)]
    keys = [c.key for part in parts for c in part]
    assert len(keys) == len(set(keys)) and set(keys) == full
    for part in parts:
        per_cond = Counter(c.condition.condition_id for c in part)
        if n <= 20:  # enough units: every condition gets the same share in a shard
            assert len(set(per_cond.values())) == 1 and len(per_cond) == len(CONDS)
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= len(CONDS)


def test_interleave_is_seeded_and_condition_balanced() -> None:
    cells = all_cells(CONDS, CASES, 1)
    a, b, c = interleave(cells, 1), interleave(cells, 1), interleave(cells, 2)
    assert [x.key for x in a] == [x.key for x in b] != [x.key for x in c]
    for r in range(len(CASES)):  # each round of len(CONDS) cells covers every condition once
        block = a[r * len(CONDS):(r + 1) * len(CONDS)]
        assert {x.condition.condition_id for x in block} == {c.condition_id for c in CONDS}
    digests = {c.condition_id: "d" for c in CONDS}
    grid = make_plan(CONDS, CASES, 1, digests, ResumeIndex(__import__("pathlib").Path(".")),
                     order="grid").todo
    assert [x.key for x in grid] == [x.key for x in cells]


def test_parse_shard_sources() -> None:
    assert parse_shard(None) is None
    assert parse_shard("2/4") == Shard(2, 4)
    assert parse_shard("auto", {"EVAL_SHARD": "3/5"}) == Shard(3, 5)
    assert parse_shard("auto", {"EVAL_SHARD_INDEX": "0", "EVAL_SHARD_TOTAL": "4"}) == Shard(1, 4)
    assert parse_shard("auto", {"JOB_COMPLETION_INDEX": "3", "EVAL_SHARD_TOTAL": "4"}) == Shard(4, 4)
    assert parse_shard("auto", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5",
                                "SLURM_ARRAY_TASK_COUNT": "3"}) == Shard(3, 3)
    assert parse_shard("auto", {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2"}) == Shard(1, 2)
    for bad, env in (("0/3", {}), ("4/3", {}), ("x", {}), ("auto", {}),
                     ("auto", {"JOB_COMPLETION_INDEX": "1"})):
        with pytest.raises(UsageError):
            parse_shard(bad, env)
