"""The Scorer the run engine calls once per completed sample (from worker threads).

``build_scorer(exp)`` returns a :class:`JudgeScorer`. Judges are built lazily per condition
from ``exp.effective[condition_id]`` (variants may change judges) under a lock; after that
scoring shares no mutable state except the verdict cache and the learned provider quirks,
both locked, so concurrent ``score`` calls are safe.

Each judge runs ``samples`` times (sample index 0..N-1), each value is type- and
range-checked (off-scale is an error, never clamped), and the N values are reduced by
median / majority. Any failure makes that judge's score errored with a one-line reason.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

from eval_harness.config.gates import is_gate
from eval_harness.config.judge_model import JudgeBlock
from eval_harness.config.models import EvalConfig
from eval_harness.judges.cache import VerdictCache
from eval_harness.judges.code import last_line
from eval_harness.judges.composite import combine, reward_composite
from eval_harness.judges.interface import Sample, ScoreResult
from eval_harness.judges.judge_kinds import JudgeImpl, build_judge
from eval_harness.judges.llm.chat_call import RetryPolicy
from eval_harness.judges.values import (
    JudgeFailure,
    Outcome,
    classify,
    normalize,
    reduce_samples,
    score_range,
)
from eval_harness.store.records import JudgeScore

_LOG = logging.getLogger("eval_harness.judges")
CACHE_FILE = "judge_cache.jsonl"
_SUM_META = ("input_tokens", "output_tokens", "tokens", "cost_usd")

Bound = tuple[JudgeBlock, JudgeImpl, float, bool]  # block, impl, weight, gate


def judge_spec(block: JudgeBlock, weight: float, gate: bool) -> dict[str, Any]:
    """What decides one judge's verdict: its spec as bound (without its description),
    weight and gate — hashed per judge (:func:`judge_digest`) and for the whole set
    (:func:`judges_digest`)."""
    return {**block.model_dump(mode="json", exclude={"description"}), "weight": weight,
            "gate": gate}


def judge_digest(block: JudgeBlock, weight: float, gate: bool) -> str:
    """16-hex digest of :func:`judge_spec`: recorded per judge in every scored record, so a
    rerun can tell which judge was edited, added or removed."""
    payload = json.dumps(judge_spec(block, weight, gate), sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

def sample_context(sample: Sample) -> dict[str, Any]:
    """What judges and judge templates see."""
    ann = sample.annotations or {}
    tags = {k: v for k, v in ann.items() if isinstance(v, (str, int, float, bool)) and k != "tags"}
    if isinstance(ann.get("tags"), dict):
        tags.update(ann["tags"])
    outputs = dict(sample.outputs)
    # `conversation` / `tool_trace`: agent-eval-harness's prompt names for the answer and
    # the tool calls; `arguments` is the case input unless a judge declares its own
    return {"outputs": outputs, "input": sample.input, "arguments": sample.input,
            "expected": sample.expected, "annotations": ann, "tags": tags,
            "case_id": sample.case_id, "levels": sample.levels,
            "conversation": outputs.get("output"), "tool_trace": outputs.get("tool_calls")}


def _merge_meta(outcomes: list[Outcome]) -> dict[str, Any]:
    if not outcomes or not outcomes[0].meta:
        return {}
    meta = dict(outcomes[0].meta)
    for key in _SUM_META:
        values = [o.meta.get(key) for o in outcomes]
        meta[key] = None if any(v is None for v in values) else sum(values)  # type: ignore[misc]
    meta["cached"] = all(o.meta.get("cached") for o in outcomes)
    if any(o.meta.get("cache_hit") for o in outcomes):  # model-call cache (eval_harness.cache)
        meta["cache_hit"] = all(o.meta.get("cache_hit") for o in outcomes)
    warnings = sorted({w for o in outcomes for w in o.meta.get("warnings", [])})
    if warnings:
        meta["warnings"] = warnings
    if len(outcomes) > 1:
        meta["sample_values"] = [o.value for o in outcomes]
    return meta


def condition_holds(condition: str, ctx: dict[str, Any]) -> bool:
    """A judge's ``condition`` (agent-eval-harness ``if``): a Python expression over the
    outputs fields, ``outputs``, ``annotations``, ``input`` and ``expected``."""
    scope = {**ctx["outputs"], "outputs": ctx["outputs"], "annotations": ctx["annotations"],
             "input": ctx["input"], "expected": ctx["expected"]}
    return bool(eval(compile(condition, "<condition>", "eval"), {}, scope))  # the user's own code


def run_judge(block: JudgeBlock, impl: JudgeImpl, ctx: dict[str, Any], weight: float,
              gate: bool) -> JudgeScore:
    """All samples of one judge -> one JudgeScore (errored on any failure; skipped, with no
    value, when its ``condition`` is false)."""
    rng = score_range(block.score_range)
    base: dict[str, Any] = {"weight": weight, "gate": gate}
    if block.step is not None:  # execution.steps: this judge sees that step's outputs
        step = (ctx["outputs"].get("steps") or {}).get(block.step)
        if step is None:
            return JudgeScore(errored=True, error=f"step {block.step!r} did not run", **base)
        ctx = {**ctx, "outputs": dict(step), "conversation": step.get("output"),
               "tool_trace": step.get("trace")}
    if block.arguments is not None:  # agent-eval-harness judge arguments
        ctx = {**ctx, "arguments": dict(block.arguments), "judge_kwargs": block.arguments}
    if block.condition is not None:
        try:
            if not condition_holds(block.condition, ctx):
                return JudgeScore(skipped=True, rationale="skipped: condition is false", **base)
        except Exception as exc:  # a condition that cannot be evaluated: errored, not skipped
            return JudgeScore(errored=True, error=f"condition: {last_line(exc)}", **base)
    outcomes: list[Outcome] = []
    try:
        checked = []
        for index in range(block.samples):
            outcome = impl.evaluate(ctx, index)
            outcomes.append(outcome)
            checked.append(classify(outcome.value, rng))
        kind, value = reduce_samples(checked)
        if gate and kind != "boolean":
            raise JudgeFailure("gate: true needs a boolean judge")
    except JudgeFailure as exc:
        return JudgeScore(errored=True, error=str(exc), **base, **_merge_meta(outcomes))
    except Exception as exc:  # a judge bug must not kill the worker: errored, never a pass
        return JudgeScore(errored=True, error=last_line(exc), **base, **_merge_meta(outcomes))
    rationale = next((o.rationale for o, c in zip(outcomes, checked, strict=True) if c[1] == value),
                     outcomes[0].rationale)
    return JudgeScore(value=value, kind=kind, normalized=normalize(kind, value, rng),  # type: ignore[arg-type]
                      score_range=list(rng) if kind == "numeric" else None,
                      rationale=rationale, **base, **_merge_meta(outcomes))


def weight_gate(cfg: EvalConfig, block: JudgeBlock) -> tuple[float, bool]:
    """A judge's composite weight and gate flag (the ``composite`` block wins)."""
    comp = cfg.composite
    weight = comp.weights.get(block.name, block.weight) if comp else block.weight
    return weight, is_gate(block.name, block.gate, comp)


def config_judge_digests(cfg: EvalConfig) -> dict[str, str]:
    """{judge: :func:`judge_digest`} of a config's non-pairwise judges, as records carry."""
    return {b.name: judge_digest(b, *weight_gate(cfg, b)) for b in cfg.judges
            if b.pairwise is None}


class JudgeScorer:
    """Thread-safe scorer over an experiment's per-condition judges."""

    def __init__(self, exp: Any, cache: VerdictCache, policy: RetryPolicy | None = None,
                 *, fence: bool = True) -> None:
        self.exp = exp
        self.cache = cache
        cfg = getattr(getattr(exp, "loaded", None), "config", None)
        cap = getattr(getattr(cfg, "execution", None), "max_response_bytes", None)
        self.policy = policy or (RetryPolicy(max_bytes=cap) if isinstance(cap, int)
                                 else RetryPolicy())
        self.fence = fence
        self._lock = threading.Lock()
        self._bound: dict[str, tuple[list[Bound], list[str]]] = {}
        self._digest: dict[str, str] = {}
        self._digests: dict[str, dict[str, str]] = {}

    def _config(self, condition_id: str) -> EvalConfig:
        effective = getattr(self.exp, "effective", {}) or {}
        return effective.get(condition_id) or self.exp.loaded.config

    def bind(self, condition_id: str) -> tuple[list[Bound], list[str]]:
        """(judges with weight and gate, names entering the composite) for a condition."""
        with self._lock:
            if condition_id not in self._bound:
                cfg = self._config(condition_id)
                comp = cfg.composite
                bound: list[Bound] = []
                for i, block in enumerate(cfg.judges):
                    if block.pairwise is not None:
                        continue
                    impl = build_judge(block, cfg, self.exp.loaded.base_dir, self.cache,
                                       self.policy, where=f"judges[{i}]({block.name})",
                                       fence=self.fence)
                    bound.append((block, impl, *weight_gate(cfg, block)))
                names = [b[0].name for b in bound]
                entering = [n for n in names if comp is None or comp.judges is None
                            or n in comp.judges]
                self._bound[condition_id] = (bound, entering)
                self._digest[condition_id] = judges_digest(bound, entering, cfg)
                self._digests[condition_id] = {b.name: judge_digest(b, w, g)
                                               for b, _, w, g in bound}
            return self._bound[condition_id]

    def judge_digests(self, condition_id: str) -> dict[str, str]:
        """{judge name: :func:`judge_digest`} of a condition's (non-pairwise) judges."""
        self.bind(condition_id)
        return dict(self._digests[condition_id])

    def score(self, sample: Sample) -> ScoreResult:
        """Every non-pairwise judge on one sample, and the composite."""
        bound, entering = self.bind(sample.condition_id)
        ctx = sample_context(sample)
        scores = {block.name: run_judge(block, impl, ctx, weight, gate)
                  for block, impl, weight, gate in bound}
        reward_block = self._config(sample.condition_id).reward
        if reward_block is not None:
            composite, errored = reward_composite(scores, [b for b, *_ in bound], reward_block)
        else:
            composite, errored = combine(scores, entering)
        return ScoreResult(scores=scores, composite=composite, composite_errored=errored,
                           judges_digest=self._digest.get(sample.condition_id, ""))


def judges_digest(bound: list[Bound], entering: list[str], cfg: EvalConfig) -> str:
    """First 12 hex digits of SHA-256 over the judge specs as bound (each block without its
    description, with its weight and gate), the entering names and the reward block: a
    comparison calls a case whose digest changed ``modified``, never improved/regressed."""
    import hashlib
    import json

    specs = [judge_spec(block, weight, gate) for block, _, weight, gate in bound]
    reward = cfg.reward.model_dump(mode="json") if cfg.reward is not None else None
    text = json.dumps([specs, entering, reward], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cache_path(runs_dir: str | Path, eval_name: str) -> Path:
    """``<runs-dir>/<eval>/judge_cache.jsonl``."""
    return Path(runs_dir) / eval_name / CACHE_FILE


def build_scorer(exp: Any, *, runs_dir: str | Path | None = None,
                 policy: RetryPolicy | None = None) -> JudgeScorer:
    """The scorer for ``exp``; with ``runs_dir`` the verdict cache persists under the eval."""
    from eval_harness.matrix.checks import self_judging

    for model in self_judging(exp.loaded.config, exp.matrix):
        _LOG.warning("judge model `%s` is also a model under test (self-preference bias)", model)
    path = cache_path(runs_dir, exp.name) if runs_dir is not None else None
    scorer = JudgeScorer(exp, VerdictCache(path), policy)
    for cond in exp.conditions:  # build (and so validate) every condition's judges up front
        scorer.bind(cond.condition_id)
    return scorer
