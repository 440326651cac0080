"""Pairwise judging: two conditions' answers on the same case, in both orders.

Config::

    judges:
      - name: preference
        pairwise: {criteria: "more accurate and better sourced", reference: "model=m1"}
        model: openai:gpt-4.1-mini
        samples: 1

``pairwise: true`` compares every pair of conditions; ``reference: <levels|id prefix>``
compares each other condition with the reference only. A custom ``prompt`` inside the
mapping may use ``{{ input.x }}``, ``{{ expected }}``, ``{{ outputs.a }}`` and
``{{ outputs.b }}`` (both answers are fenced as untrusted data).

For each (case, replication) present in both conditions the judge sees (a, b) and then
(b, a). Per order the ``samples`` verdicts are reduced by plurality (no plurality -> tie).
The case verdict for condition ``a``: ``win`` when both orders prefer a, ``loss`` when both
prefer b, ``tie`` otherwise — a disagreement between orders is position bias and is
flagged ``inconsistent``. Errored calls give an errored case (no verdict).

Output: ``<eval-dir>/pairwise.json``::

    {"schema_version": 1,
     "judges": {"preference": {"model": "openai:gpt-4.1-mini", "pairs": [
        {"a": "<cid>", "b": "<cid>", "levels_a": {...}, "levels_b": {...},
         "summary": {"n": 12, "wins": 7, "ties": 3, "losses": 2, "errored": 0,
                     "inconsistent": 2, "win_rate": 0.708, "sign_test_p": 0.18},
         "results": [{"case_id": "...", "replication": 1, "verdict": "win",
                      "orders": ["A", "B"], "inconsistent": false, "errored": false,
                      "error": null, "rationales": ["...", "..."]}]}]}}}

``win_rate`` = (wins + ties/2) / (wins + ties + losses); ``sign_test_p`` is the two-sided
exact binomial test of wins against losses (ties dropped). Pairwise verdicts are reported
on their own and never enter the ANOVA, the composite or the per-judge screen.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from eval_harness._util.atomic_files import read_json
from eval_harness._util.json_text import write_text_atomic
from eval_harness._util.redact import redact
from eval_harness.config.judge_model import JudgeBlock
from eval_harness.judges.cache import VerdictCache
from eval_harness.judges.judge_kinds import llm_settings
from eval_harness.judges.llm.chat_call import RetryPolicy
from eval_harness.judges.llm.judge import LLMJudge
from eval_harness.judges.scorer import CACHE_FILE
from eval_harness.judges.values import JudgeFailure

PAIRWISE_FILE = "pairwise.json"
DEFAULT_TEMPLATE = """\
Task given to two systems (from the dataset):
{{ input }}

Answer A:
{{ outputs.a }}

Answer B:
{{ outputs.b }}

Which answer is better{criteria}? Judge substance only: correctness first, then completeness
and clarity. Ignore length, style and the order in which the answers are shown. Give verdict
"A", "B" or "tie"."""

Answers = dict[tuple[str, str, int], tuple[str, dict[str, Any]]]


def read_answers(eval_dir: Path) -> tuple[Answers, dict[str, dict[str, Any]]]:
    """(condition, case, replication) -> (answer, input) for complete ok cases; levels per id."""
    answers: Answers = {}
    levels: dict[str, dict[str, Any]] = {}
    for run_json in sorted(eval_dir.glob("*/run.json")):
        # read_json: None for a malformed, deep-nested or non-regular (FIFO) file
        run = read_json(run_json)
        if not isinstance(run, dict) or not isinstance(run.get("condition_id"), str):
            continue
        rep = run.get("replication", 1)
        if not isinstance(rep, int) or isinstance(rep, bool):
            continue
        cid = run["condition_id"]
        levels.setdefault(cid, run["levels"] if isinstance(run.get("levels"), dict) else {})
        for case_dir in sorted((run_json.parent / "cases").glob("*/")):
            record = read_json(case_dir / "record.json")
            if not isinstance(record, dict) or record.get("status") != "ok":
                continue
            outputs = read_json(case_dir / "outputs.json")
            if not isinstance(outputs, dict):
                continue
            inp = read_json(case_dir / "input.json")
            answers[(cid, case_dir.name, rep)] = (str(outputs.get("output") or ""),
                                                  inp if isinstance(inp, dict) else {})
    return answers, levels


def _plurality(values: list[str]) -> str:
    counts = Counter(values).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "tie"
    return counts[0][0]


def combine_orders(first: str, second: str) -> tuple[str, bool]:
    """(verdict for a, inconsistent) from order (a, b) and order (b, a)."""
    a_first = {"A": 1, "B": -1, "tie": 0}[first]
    a_second = {"A": -1, "B": 1, "tie": 0}[second]
    if a_first == a_second == 1:
        return "win", False
    if a_first == a_second == -1:
        return "loss", False
    return "tie", a_first != a_second


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, win rate and the sign test."""
    counts = Counter(r["verdict"] for r in results if not r["errored"])
    wins, ties, losses = counts["win"], counts["tie"], counts["loss"]
    decided = wins + ties + losses
    p = None
    if wins + losses:
        from scipy.stats import binomtest  # ~40 MiB: only once verdicts exist to test

        p = binomtest(wins, wins + losses, 0.5).pvalue
    return {"n": len(results), "wins": wins, "ties": ties, "losses": losses,
            "errored": sum(1 for r in results if r["errored"]),
            "inconsistent": sum(1 for r in results if r.get("inconsistent")),
            "win_rate": (wins + ties / 2) / decided if decided else None,
            "sign_test_p": None if p is None else float(p)}


def _pairs(block: JudgeBlock, present: list[str], exp: Any) -> list[tuple[str, str]]:
    spec = block.pairwise if isinstance(block.pairwise, dict) else {}
    ref = spec.get("reference")
    if ref is None:
        return list(itertools.combinations(present, 2))
    from eval_harness.matrix.experiment import select_conditions

    chosen = select_conditions(exp.conditions, [str(ref)])
    ref_id = chosen[0].condition_id
    return [(c, ref_id) for c in present if c != ref_id]


def judge_pair(judge: LLMJudge, samples: int, answers: Answers, a: str, b: str,
               expected: dict[str, Any]) -> list[dict[str, Any]]:
    """Both-order verdicts for every (case, replication) the two conditions share."""
    keys = sorted((case, rep) for (cid, case, rep) in answers if cid == a
                  and (b, case, rep) in answers)
    results = []
    for case, rep in keys:
        (ans_a, inp), (ans_b, _) = answers[(a, case, rep)], answers[(b, case, rep)]
        base = {"input": inp, "arguments": inp, "expected": expected.get(case), "case_id": case}
        row: dict[str, Any] = {"case_id": case, "replication": rep}
        try:
            orders, why = [], []
            for x, y in ((ans_a, ans_b), (ans_b, ans_a)):
                ctx = {**base, "outputs": {"a": x, "b": y}}
                draws = [judge.evaluate(ctx, i) for i in range(samples)]
                orders.append(_plurality([str(d.value) for d in draws]))
                why.append(draws[0].rationale)
            verdict, inconsistent = combine_orders(orders[0], orders[1])
            row.update(verdict=verdict, orders=orders, inconsistent=inconsistent,
                       errored=False, error=None, rationales=why)
        except JudgeFailure as exc:
            row.update(verdict=None, orders=None, inconsistent=False, errored=True,
                       error=str(exc), rationales=None)
        results.append(row)
    return results


def run_pairwise(exp: Any, eval_dir: str | Path, *, policy: RetryPolicy | None = None,
                 output: str | Path | None = None) -> dict[str, Any]:
    """Judge every configured pair from the run directories under ``eval_dir``; write
    ``output`` (default ``<eval_dir>/pairwise.json``) and return the document ({} when the
    config has no pairwise judge; nothing is written then)."""
    cfg = exp.loaded.config
    blocks = [b for b in cfg.judges if b.pairwise is not None]
    if not blocks:
        return {}
    root = Path(eval_dir)
    answers, levels = read_answers(root)
    order = [c.condition_id for c in exp.conditions if c.condition_id in levels]
    present = order + sorted(c for c in levels if c not in order)
    expected = {c.case_id: c.expected for c in exp.cases}
    cache = VerdictCache(root / CACHE_FILE)
    doc: dict[str, Any] = {"schema_version": 1, "judges": {}}
    for i, block in enumerate(blocks):
        where = f"judges[{i}]({block.name})"
        spec = block.pairwise if isinstance(block.pairwise, dict) else {}
        criteria = f" ({spec['criteria']})" if spec.get("criteria") else ""
        template = spec.get("prompt") or DEFAULT_TEMPLATE.replace("{criteria}", criteria)
        settings = llm_settings(block, cfg, where, policy or RetryPolicy())
        judge = LLMJudge(block.name, template, settings, None, cache, kind="pairwise")
        pairs = []
        for a, b in _pairs(block, present, exp):
            results = judge_pair(judge, block.samples, answers, a, b, expected)
            pairs.append({"a": a, "b": b, "levels_a": levels.get(a, {}),
                          "levels_b": levels.get(b, {}), "summary": summarize(results),
                          "results": results})
        doc["judges"][block.name] = {"model": settings.model.name, "pairs": pairs}
    target = Path(output) if output else root / PAIRWISE_FILE
    write_text_atomic(target, redact(json.dumps(doc, indent=2, default=str)))
    return doc
