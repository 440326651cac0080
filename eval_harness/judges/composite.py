"""The per-sample composite: one rule for the judges stage and the analysis.

    composite = errored                       if an entering judge errored (never 0)
              = 0                             if a gate judge's value is false (normalised 0)
              = Σ_j w_j · x̃_j / Σ_j w_j      otherwise, j over every entering judge
                                              (a passing gate enters as 1 with its weight)
              = unknown (not errored)         when nothing enters, Σ w_j = 0, or an entering
                                              judge with a weight has no normalised value

    x̃_j = 0/1 for booleans;  (x_j − lo_j) / (hi_j − lo_j) clipped to [0, 1] for numbers
          with a score range [lo_j, hi_j].

The judges enter by default when they are not pairwise; ``composite.judges`` narrows
that, ``composite.weights`` overrides a judge's ``weight`` and ``composite.gates`` adds gates
(:func:`coerce_judge_specs`). A judge skipped by its ``condition`` is absent.

:func:`composite` is the rule. Its callers:

- the judges stage (:func:`combine`, from :mod:`eval_harness.judges.scorer`) with the
  config's judges, where every entering judge that scored has a normalised value (a
  numeric judge has a range, a gate must be boolean), so "unknown" only means nothing
  entered;
- the analysis, for records that carry no composite (imports) and for
  ``--allow-errored-judges`` (``analysis.loading`` chunk readers,
  ``analysis.recompose``): there a number without a known range makes the composite
  unknown (NaN, not errored) rather than counting as 0. Without a config (no judge
  specs) weights and gates are those recorded in the judge scores (this tool's records),
  else 1 and none.

agent-eval-harness's rule "the `tests_pass` gate, otherwise the normalised
`solution_quality`" is this rule with ``weight: 0`` on the gate. Its own ``reward``
(a ``reward:`` block, or agent-eval-harness runs analysed by their rule) is a different
rule, chosen explicitly: :func:`reward_composite` and :mod:`eval_harness.judges.reward`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eval_harness.config.gates import is_gate
from eval_harness.judges.reward import JudgeResult, reward
from eval_harness.store.records import JudgeScore

NAN = float("nan")


@dataclass(frozen=True)
class JudgeSpec:
    """How one judge enters the composite (from a config's `judges` / `composite`)."""

    name: str
    score_range: tuple[float, float] | None = None
    gate: bool = False
    weight: float = 1.0
    pairwise: bool = False
    in_composite: bool = True


def _spec_from_mapping(name: str, raw: Mapping[str, Any]) -> JudgeSpec:
    rng = raw.get("score_range")
    return JudgeSpec(
        name=name,
        score_range=(float(rng[0]), float(rng[1])) if rng else None,
        gate=bool(raw.get("gate", False)),
        weight=float(raw.get("weight", 1.0)),
        pairwise=bool(raw.get("pairwise", False)),
        in_composite=bool(raw.get("in_composite", True)),
    )


def _spec_from_block(block: Any) -> JudgeSpec:
    rng = getattr(block, "score_range", None)
    return JudgeSpec(
        name=str(block.name),
        score_range=(float(rng[0]), float(rng[1])) if rng else None,
        gate=bool(getattr(block, "gate", False)),
        weight=float(getattr(block, "weight", 1.0)),
        pairwise=getattr(block, "pairwise", None) is not None,
    )


def coerce_judge_specs(obj: Any) -> dict[str, JudgeSpec] | None:
    """Judge specs from an `EvalConfig`, a list of `JudgeBlock`s, or {name: spec | mapping}.

    An `EvalConfig`'s `composite` block (judges that enter, weight overrides, extra gates)
    is applied. None stays None (no config).
    """
    if obj is None:
        return None
    composite = None
    if hasattr(obj, "judges") and not isinstance(obj, Mapping):
        composite = getattr(obj, "composite", None)
        obj = obj.judges
    specs: dict[str, JudgeSpec] = {}
    if isinstance(obj, Mapping):
        for name, raw in obj.items():
            if isinstance(raw, JudgeSpec):
                specs[str(name)] = raw
            elif isinstance(raw, Mapping):
                specs[str(name)] = _spec_from_mapping(str(name), raw)
            else:
                specs[str(name)] = _spec_from_block(raw)
    elif isinstance(obj, Iterable):
        for block in obj:
            spec = block if isinstance(block, JudgeSpec) else _spec_from_block(block)
            specs[spec.name] = spec
    if composite is not None:
        entering = set(composite.judges) if composite.judges is not None else None
        for name, spec in list(specs.items()):
            specs[name] = JudgeSpec(
                name=name,
                score_range=spec.score_range,
                gate=is_gate(name, spec.gate, composite),
                weight=float(composite.weights.get(name, spec.weight)),
                pairwise=spec.pairwise,
                in_composite=spec.in_composite and (entering is None or name in entering),
            )
    return specs


def normalise(value: float, kind: str, score_range: Any) -> float:
    """Map one judge value to [0, 1]; NaN when it cannot be (unknown range, pairwise)."""
    if math.isnan(value) or kind == "pairwise":
        return NAN
    if kind == "boolean":
        return value
    if score_range:
        lo, hi = float(score_range[0]), float(score_range[1])
        if hi > lo:
            return min(1.0, max(0.0, (value - lo) / (hi - lo)))
    return NAN


@dataclass(frozen=True)
class JudgeValue:
    """One judge's contribution to a composite."""

    normalized: float
    errored: bool
    gate: bool
    weight: float


def composite(values: Iterable[JudgeValue]) -> tuple[float, bool]:
    """(composite, errored) of one sample; NaN and not errored when it cannot be formed."""
    parts = list(values)
    if any(v.errored for v in parts):
        return NAN, True
    if any(v.gate and v.normalized == 0.0 for v in parts):
        return 0.0, False
    total = sum(v.weight for v in parts)
    if not parts or total <= 0 or any(math.isnan(v.normalized) for v in parts if v.weight > 0):
        return NAN, False
    return sum(v.weight * v.normalized for v in parts if v.weight > 0) / total, False


def combine(scores: Mapping[str, JudgeScore], entering: Sequence[str]) -> tuple[float | None, bool]:
    """(composite or None, composite_errored) of one sample's judge scores, by
    :func:`composite`; a judge skipped by its condition is absent, None means unknown."""
    parts = [JudgeValue(NAN if s.normalized is None else float(s.normalized), s.errored,
                        s.gate, s.weight)
             for s in (scores[n] for n in entering if n in scores and not scores[n].skipped)]
    value, errored = composite(parts)
    return (None if math.isnan(value) else value), errored


def reward_composite(scores: Mapping[str, JudgeScore], blocks: Sequence[Any],
                     block: Any) -> tuple[float | None, bool]:
    """The composite under a ``reward:`` block (:mod:`eval_harness.judges.reward`)."""
    ranges = {b.name: (float(b.score_range[0]), float(b.score_range[1]))
              for b in blocks if b.score_range}
    results = {name: JudgeResult(None if s.errored or s.skipped
                                 or isinstance(s.value, str) else s.value, errored=s.errored)
               for name, s in scores.items() if s.kind != "pairwise"}
    return reward(results, ranges, block.to_spec())
