"""One run's records → columns: a malformed record is rolled back whole (its tags too)."""

from __future__ import annotations

from eval_harness.analysis.loading.chunk import Chunk


def _rec(case: str, **extra: object) -> dict[str, object]:
    return {"case_id": case, "tags": {"tier": case}, "composite": 0.5,
            "scores": {"q": {"value": 3, "kind": "numeric", "normalized": 0.5}}, **extra}


def test_a_malformed_record_is_rolled_back_with_its_tags() -> None:
    chunk = Chunk(None, "")
    chunk.add_checked(_rec("c1"), "p1", 1, "p1")
    # a range that is not two numbers fails in the row builder, after the tags were kept
    bad = _rec("c2", composite=None)
    bad["scores"] = {"q": {"value": 3, "kind": "numeric", "score_range": {"lo": 1}}}
    chunk.add_checked(bad, "p2", 1, "p2")
    chunk.add_checked(_rec("c3"), "p3", 1, "p3")
    assert chunk.s_case == ["c1", "c3"] and chunk.r_sample == [0, 0, 1, 1]
    assert list(chunk.case_tags) == ["c1", "c3"]
    assert len(chunk.bad_records) == 1 and chunk.bad_records[0].startswith("p2: malformed record (KeyError")
    for name, column in vars(chunk).items():
        if name.startswith("s_"):
            assert len(column) == 2, name
        elif name.startswith("r_"):
            assert len(column) == 4, name
