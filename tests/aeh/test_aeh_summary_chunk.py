"""Reusing the rows of an already-scored judge combination gives exactly the columns that
scoring every case one by one gives (types, NaN, -0.0, notes and flags included)."""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_harness.aeh import summary_chunk as aeh_chunk
from eval_harness.aeh.scoring import AehRule, UnreadableRun, case_record
from eval_harness.aeh.summary_chunk import AehSample, build_chunk, read_aeh_chunk
from eval_harness.analysis.loading.chunk import Chunk
from eval_harness.judges.composite import JudgeSpec
from eval_harness.judges.reward import RewardSpec

VALUES: list[Any] = [True, False, 1, 0, 3, 5, 1.0, 3.0, 0.0, -0.0, 4.5, math.nan, math.inf,
                     "A", "tie", None, [1], {"x": 1}]
TYPES: list[Any] = ["boolean", "numeric", "pairwise", "BOOL", None, "", 1, True]
RANGES: list[Any] = [None, [1, 5], [1.0, 5.0], [True, 5], [0, 10], "1-5", [], [[1], 5],
                     {"lo": 1}, [5, 1], ["1", "5"]]

RULES = {
    "default": AehRule(),
    "config ranges": AehRule(ranges={"q": (0.0, 10.0)}, from_config=True),
    "reward judge": AehRule(reward=RewardSpec(judge="q", normalize=True), from_config=True),
    "weighted": AehRule(reward=RewardSpec(weights={"q": 2.0, "ok": 1.0}), from_config=True),
    "native composite": AehRule(from_config=True, native_composite=True),
}
SPECS: dict[str, dict[str, JudgeSpec] | None] = {
    "no config": None,
    "config": {"q": JudgeSpec("q", score_range=(1.0, 5.0)), "ok": JudgeSpec("ok", gate=True),
               "p": JudgeSpec("p", pairwise=True)},
}


def _entry(rnd: random.Random) -> Any:
    if rnd.random() < 0.1:
        return rnd.choice(VALUES)  # a bare value, not a mapping
    raw: dict[str, Any] = {"value": rnd.choice(VALUES), "rationale": f"r{rnd.randint(0, 9)}"}
    if rnd.random() < 0.7:
        raw["judge_type"] = rnd.choice(TYPES)
    if rnd.random() < 0.3:
        raw["score_range"] = rnd.choice(RANGES)
    if rnd.random() < 0.1:
        raw[rnd.choice(["errored", "error"])] = rnd.choice([True, "boom", 0, ""])
    return raw


def _per_case(rnd: random.Random, n: int) -> dict[Any, Any]:
    # few distinct combinations (reused many times), as in real runs, plus odd ones
    pool = []
    for _ in range(12):
        names = rnd.sample(["ok", "q", "p", "x", 1], rnd.randint(0, 3))
        pool.append({name: _entry(rnd) for name in names})
    per_case: dict[Any, Any] = {}
    for i in range(n):
        r = rnd.random()
        judges = rnd.choice(pool) if r < 0.8 else (
            {"q": _entry(rnd)} if r < 0.95 else rnd.choice([None, "x", [], {}]))
        per_case[rnd.choice([f"case-{i:04d}", i, f"c{i}"])] = judges
    per_case[""] = pool[0]  # an empty case id: a malformed record, never reused
    return per_case


def _one_by_one(per_case: dict[Any, Any], rule: AehRule,
                specs: dict[str, JudgeSpec] | None) -> Chunk:
    chunk = Chunk(specs, "fin")
    for i, (case_id, judges) in enumerate(per_case.items()):
        rec = aeh_chunk.scored_record(chunk, case_id, judges, rule, "run")
        if rec is not None:
            chunk.add_checked(rec, i, aeh_chunk.PENDING_REPLICATION, "run")
    return chunk


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("specs", list(SPECS))
def test_reused_rows_equal_scoring_each_case(rule: str, specs: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(f"{rule}/{specs}")
    per_case = _per_case(rnd, 400)
    want = _one_by_one(per_case, RULES[rule], SPECS[specs])
    calls = []
    real = aeh_chunk.case_record

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(aeh_chunk, "case_record", counting)
    got = build_chunk("run", per_case, RULES[rule], SPECS[specs], "fin")
    for name, column in vars(want).items():
        if name.startswith(("s_", "r_")) or name in ("bad_records", "bad_values"):
            assert _same(getattr(got, name), column), name
    assert got.case_tags == want.case_tags
    assert (got.composite_unknown, got.composite_inferred) == (
        want.composite_unknown, want.composite_inferred)
    assert len(calls) < 0.8 * len(per_case)  # rows really were reused


def test_the_source_rereads_the_same_record(tmp_path: Path) -> None:
    per_case = {"c1": {"q": {"value": 3, "rationale": "why", "judge_type": "numeric"}},
                "c2": {"q": {"value": True}}}
    (tmp_path / "summary.yaml").write_text(yaml.safe_dump({"run_id": "r", "per_case": per_case}))
    rule = AehRule()
    got = read_aeh_chunk(str(tmp_path), rule, None)
    assert not isinstance(got, UnreadableRun)
    _, part = got
    cache: OrderedDict[str, Any] = OrderedDict()
    for i, (case_id, judges) in enumerate(per_case.items()):
        assert part.source(i) == AehSample(str(tmp_path), i, rule)
        assert part.source(i).record(cache) == case_record(case_id, judges, rule)


def test_an_unreadable_summary_is_returned_not_raised(tmp_path: Path) -> None:
    (tmp_path / "summary.yaml").write_text("per_case: [1, 2]\n")
    got = read_aeh_chunk(str(tmp_path), AehRule(), None)
    assert isinstance(got, UnreadableRun) and "per_case mapping" in str(got)
