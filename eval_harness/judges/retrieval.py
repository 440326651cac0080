"""The ``retrieval`` built-in: did the application retrieve the case's expected documents?

Retrieved documents are read from the trace: the ``output`` of every ``retrieval`` step
(depth first, in order), a list of documents or a mapping holding one under
``documents`` / ``docs`` / ``results``. A document is a mapping with an id under ``id`` /
``doc_id`` / ``source`` / ``url`` and its text under ``text`` / ``content`` /
``page_content``, or a bare string (its own id and text). The ranking is the retrieved ids
with repeats dropped (first occurrence kept).

With E the expected ids (``expected_docs``: a list, or a ``{{ expected.x }}`` template;
default the case's ``expected.expected_docs``, else ``expected.docs``), R_k the first k
ranked ids (k default: all retrieved) and rank(d) a document's 1-based position::

    recall@k    = |R_k ∩ E| / |E|
    precision@k = |R_k ∩ E| / k           (0 when k = 0)
    MRR         = 1 / min{rank(d) : d ∈ R_k ∩ E}, 0 when none   (one query: its
                  reciprocal rank; the mean over cases is the usual MRR)

The judge value is ``metric`` (default ``recall``, so a numeric value in [0, 1]); all three
are recorded beside it (``recall_at_k``, ``precision_at_k``, ``mrr``), with ``k`` and the
retrieved ids. No retrieval step, or no expected documents, is an error, never a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eval_harness.config.template_syntax import render_value
from eval_harness.judges.values import JudgeFailure, Outcome
from eval_harness.trace.model import walk_json

METRICS = ("recall", "precision", "mrr")
_ID_KEYS = ("id", "doc_id", "source", "url")
_TEXT_KEYS = ("text", "content", "page_content")
_LIST_KEYS = ("documents", "docs", "results")


@dataclass(frozen=True)
class Doc:
    """One retrieved document."""

    id: str
    text: str


def _as_doc(item: Any) -> Doc | None:
    if isinstance(item, str):
        return Doc(item, item)
    if not isinstance(item, Mapping):
        return None
    doc_id = next((item[k] for k in _ID_KEYS if item.get(k) is not None), None)
    text = next((item[k] for k in _TEXT_KEYS if item.get(k) is not None), None)
    if doc_id is None and text is None:
        return None
    return Doc(str(doc_id if doc_id is not None else text), "" if text is None else str(text))


def retrieved_docs(trace: Any) -> list[Doc] | None:
    """Documents of every retrieval step in order; None when the trace has no such step."""
    docs: list[Doc] = []
    found = False
    for step in walk_json(trace):
        if step.get("kind") != "retrieval":
            continue
        found = True
        out = step.get("output")
        if isinstance(out, Mapping):
            out = next((out[k] for k in _LIST_KEYS if isinstance(out.get(k), list)), [out])
        for item in out if isinstance(out, list) else [out]:
            doc = _as_doc(item)
            if doc is not None:
                docs.append(doc)
    return docs if found else None


@dataclass(frozen=True)
class RetrievalScores:
    """recall@k, precision@k and reciprocal rank of one query."""

    recall: float
    precision: float
    mrr: float
    k: int


def retrieval_scores(ranked: list[str], expected: set[str], k: int | None) -> RetrievalScores:
    """The formulas of the module docstring over distinct ranked ids (pure)."""
    distinct = list(dict.fromkeys(ranked))
    k = len(distinct) if k is None else k
    top = distinct[:k]
    hits = [i for i, d in enumerate(top, start=1) if d in expected]
    return RetrievalScores(recall=len(hits) / len(expected), precision=len(hits) / k if k else 0.0,
                           mrr=1.0 / hits[0] if hits else 0.0, k=k)


def _expected(o: Mapping[str, Any], ctx: dict[str, Any]) -> set[str]:
    if "expected_docs" in o:
        raw = render_value(o["expected_docs"], ctx, where="judge")
    else:
        exp = ctx.get("expected")
        raw = next((exp[k] for k in ("expected_docs", "docs")
                    if isinstance(exp, Mapping) and k in exp), None)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise JudgeFailure("retrieval needs the case's expected documents (`expected."
                           "expected_docs`: a non-empty list of ids, or `expected_docs:`)")
    return {str(d["id"] if isinstance(d, Mapping) and "id" in d else d) for d in raw}


def retrieval(spec: Any, ctx: dict[str, Any]) -> Outcome:
    """recall@k (or the chosen ``metric``) of the trace's retrieved documents."""
    o = spec if isinstance(spec, dict) else {}
    docs = retrieved_docs(ctx["outputs"].get("trace"))
    if docs is None:
        raise JudgeFailure("no retrieval step in the trace: cannot score retrieval")
    expected = _expected(o, ctx)
    k = o.get("k")
    s = retrieval_scores([d.id for d in docs], expected, None if k is None else int(k))
    metric = str(o.get("metric", "recall"))
    value = {"recall": s.recall, "precision": s.precision, "mrr": s.mrr}[metric]
    ranked = list(dict.fromkeys(d.id for d in docs))
    why = (f"recall@{s.k} {s.recall:.3g}, precision@{s.k} {s.precision:.3g}, MRR {s.mrr:.3g} "
           f"({len(ranked)} retrieved, {len(expected)} expected)")
    return Outcome(value, why, {"recall_at_k": s.recall, "precision_at_k": s.precision,
                                "mrr": s.mrr, "k": s.k, "retrieved_ids": ranked[:50]})


def check_retrieval_spec(spec: Any) -> str | None:
    """A static problem with the options, or None."""
    if spec is True:
        return None
    if not isinstance(spec, dict):
        return "`retrieval` needs true or {k, expected_docs, metric}"
    k = spec.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        return "`retrieval.k` needs an integer >= 1"
    if spec.get("metric", "recall") not in METRICS:
        return "`retrieval.metric` is one of " + ", ".join(METRICS)
    return None
