"""The ``retrieval`` built-in: hand-computed recall@k / precision@k / MRR, end to end against
a fixture RAG service over real HTTP (the http runner records its retrieval step)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from judge_helpers import FAST
from rag_service import RagService

from eval_harness.judges.builtins import FUNCTIONS, check_spec
from eval_harness.judges.retrieval import retrieval_scores, retrieved_docs
from eval_harness.judges.scorer import JudgeScorer, build_scorer
from eval_harness.judges.values import JudgeFailure
from eval_harness.matrix.experiment import prepare
from eval_harness.runner.cell import Backoff
from eval_harness.runner.engine import EngineOptions, execute

# ranked ids, expected ids, k -> (recall, precision, MRR), worked out by hand
TABLE = [
    (["d1", "d3", "d2"], {"d1", "d2"}, 2, (1 / 2, 1 / 2, 1.0)),      # top-2 {d1, d3}
    (["d1", "d3", "d2"], {"d1", "d2"}, 3, (1.0, 2 / 3, 1.0)),
    (["d1", "d3", "d2"], {"d1", "d2"}, 1, (1 / 2, 1.0, 1.0)),
    (["d4", "d2", "d1"], {"d1"}, 3, (1.0, 1 / 3, 1 / 3)),            # first hit at rank 3
    (["d3", "d4"], {"d1", "d2"}, 2, (0.0, 0.0, 0.0)),
    (["d2", "d2", "d5", "d1"], {"d1", "d5", "d6"}, 3, (2 / 3, 2 / 3, 1 / 2)),  # d2 once
    (["d2"], {"d2"}, 5, (1.0, 1 / 5, 1.0)),                          # fewer than k retrieved
    (["d2", "d1"], {"d1"}, None, (1.0, 1 / 2, 1 / 2)),              # k = all retrieved
    ([], {"d1"}, None, (0.0, 0.0, 0.0)),
]


@pytest.mark.parametrize(("ranked", "expected", "k", "want"), TABLE)
def test_formulas_on_hand_computed_cases(ranked: list[str], expected: set[str], k: int | None,
                                         want: tuple[float, float, float]) -> None:
    s = retrieval_scores(ranked, expected, k)
    assert (s.recall, s.precision, s.mrr) == pytest.approx(want)


def _ctx(trace: Any, expected: Any) -> dict[str, Any]:
    return {"outputs": {"trace": trace}, "expected": expected, "input": {}, "tags": {}}


def test_documents_from_nested_steps_and_shapes() -> None:
    trace = [{"kind": "llm", "name": "x", "children": [
        {"kind": "retrieval", "name": "a", "output": {"documents": [{"doc_id": 7, "content": "t"}]}},
        {"kind": "retrieval", "name": "b", "output": ["plain text doc", {"source": "s.md"}]}]}]
    assert [(d.id, d.text) for d in retrieved_docs(trace)] == [
        ("7", "t"), ("plain text doc", "plain text doc"), ("s.md", "")]
    assert retrieved_docs([{"kind": "tool", "name": "x"}]) is None


def test_errors_are_errors_not_scores() -> None:
    docs = [{"kind": "retrieval", "name": "r", "output": ["d1"]}]
    with pytest.raises(JudgeFailure, match="no retrieval step"):
        FUNCTIONS["retrieval"]({}, _ctx([{"kind": "tool", "name": "t"}], {"expected_docs": ["d1"]}))
    with pytest.raises(JudgeFailure, match="expected documents"):
        FUNCTIONS["retrieval"]({}, _ctx(docs, {"answer": "x"}))
    # the expected documents can also come from another field, via a template
    out = FUNCTIONS["retrieval"]({"expected_docs": "{{ expected.gold }}"}, _ctx(docs, {"gold": ["d1"]}))
    assert out.value == 1.0
    assert "k" in (check_spec("retrieval", {"k": 0}) or "")
    assert "metric" in (check_spec("retrieval", {"metric": "ndcg"}) or "")
    assert check_spec("retrieval", True) is None


CASES = [("capital", ["d1", "d2"], (1.0, 2 / 3, 1.0)),
         ("tower", ["d1"], (1.0, 1 / 3, 1 / 3)),
         ("germany", ["d1", "d2"], (0.0, 0.0, 0.0)),
         ("river", ["d1", "d5", "d6"], (2 / 3, 2 / 3, 1 / 2))]


def test_end_to_end_against_the_rag_service(tmp_path: Path) -> None:
    cases = [{"id": q, "input": {"question": q}, "expected": {"expected_docs": docs}}
             for q, docs, _ in CASES]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    with RagService() as rag:
        cfg = {"name": "rag", "matrix": {"factors": {"model": ["m"]}},
               "runner": {"type": "http", "url": rag.url}, "dataset": {"path": "cases.yaml"},
               "execution": {"retries": 0, "timeout": 20},
               "judges": [{"name": "recall", "retrieval": {"k": 3}},
                          {"name": "mrr", "retrieval": {"k": 3, "metric": "mrr"}}]}
        (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
        exp = prepare(tmp_path / "eval.yaml")
        scorer = JudgeScorer(exp, build_scorer(exp).cache, FAST)
        summary = execute(exp, scorer, EngineOptions(runs_dir=tmp_path / "runs", progress="off",
                                                      backoff=Backoff(0.01, 0.05)))
    assert sorted(rag.queries) == sorted(q for q, _, _ in CASES)
    for q, _, (recall, precision, mrr) in CASES:
        [rec_path] = summary.eval_dir.glob(f"*/cases/{q}/record.json")
        rec = json.loads(rec_path.read_text())
        assert rec["status"] == "ok", rec
        score = rec["scores"]["recall"]
        assert score["value"] == pytest.approx(recall) and score["kind"] == "numeric"
        assert (score["precision_at_k"], score["mrr"], score["k"]) == (
            pytest.approx(precision), pytest.approx(mrr), 3)
        assert rec["scores"]["mrr"]["value"] == pytest.approx(mrr)
