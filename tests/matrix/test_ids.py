"""Condition ids: golden values, order independence, distinctness (hypothesis)."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from eval_harness.matrix.builder import MatrixBuilder
from eval_harness.matrix.ids import HASH_VERSION, condition_id

# Golden ids: sha256(json.dumps(levels, sort_keys=True, default=str))[:12], as
# agent-eval-harness computes them. A change here means every user's ids change.
GOLDEN = [
    ({"model": "claude-opus-4-8", "effort": "high"}, "f71f1e9cc48c"),
    ({"model": "claude-sonnet-4-6", "effort": "low"}, "0e7c4a849044"),
    ({"model": "m1", "context": "none"}, "33e103849b96"),
    ({"temperature": 0.7, "tools": True, "k": 3}, "42f18fb7d61f"),
]


def _reference(levels: dict) -> str:
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def test_hash_version_pinned() -> None:
    assert HASH_VERSION == 1


def test_golden_ids() -> None:
    for levels, pinned in GOLDEN:
        assert condition_id(levels) == pinned
        assert _reference(levels) == pinned


def test_builder_ids_match_golden_and_keep_yaml_types() -> None:
    m = MatrixBuilder.from_yaml({"factors": {"tools": [True], "temperature": [0.7], "k": [3]}})
    (cond,) = m.condition_list()
    assert cond.condition_id == "42f18fb7d61f"
    assert cond.input_overrides == {"tools": True, "temperature": 0.7, "k": 3}
    assert isinstance(cond.input_overrides["k"], int)


level_values = st.one_of(st.text(min_size=1, max_size=8), st.integers(-5, 50), st.booleans())
factor_names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: n not in {"judge", "value", "kind", "eval", "tokens", "errored"})


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(factor_names, st.lists(level_values, min_size=1, max_size=3, unique_by=lambda v: v),
                       min_size=1, max_size=3), st.randoms())
def test_ids_independent_of_factor_and_key_order(factors: dict, rnd) -> None:
    names = list(factors)
    rnd.shuffle(names)
    shuffled = {n: factors[n] for n in names}
    a = {c.condition_id: c.levels for c in MatrixBuilder.from_yaml({"factors": factors}).conditions()}
    b = {c.condition_id: c.levels for c in MatrixBuilder.from_yaml({"factors": shuffled}).conditions()}
    assert set(a) == set(b)
    for cid, levels in a.items():
        reordered = dict(reversed(list(levels.items())))
        assert condition_id(reordered) == cid


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(factor_names, st.lists(level_values, min_size=1, max_size=3, unique_by=lambda v: v),
                       min_size=1, max_size=3))
def test_distinct_level_sets_give_distinct_ids(factors: dict) -> None:
    conds = MatrixBuilder.from_yaml({"factors": factors}).condition_list()
    ids = [c.condition_id for c in conds]
    assert len(set(ids)) == len(ids)
    n = 1
    for levels in factors.values():
        n *= len(levels)
    assert len(ids) == n
