"""agent-eval-harness's composite ("reward"): its default rule and its ``reward:`` block.

Used for agent-eval-harness run directories (analysed with or without its eval.yaml) and
for this tool's own runs when the config carries a ``reward:`` block.

Per judge j with value v_j (pairwise judges never enter):

    x_j = 1/0 for booleans;  clip((v_j − lo_j) / (hi_j − lo_j), 0, 1) for numbers, over the
          judge's declared ``score_range``, else ``reward.score_range``, else [1, 5]
          (agent-eval-harness's default scale; ``reward.raw`` judges are clipped, not scaled)

Default rule (no ``reward:`` block)::

    reward = 0                 if any boolean judge is false           (gates)
           = mean_j x_j        over the numeric judges with a value
           = 1                 when only passing booleans scored

``reward:`` block: ``judge: name`` (that judge's x, clipped as-is unless ``normalize``),
``formula: weighted`` (Σ w_j x_j / Σ w_j over ``weights``), or ``formula: <expression>``
(arithmetic over judge names, evaluated by :func:`evaluate_formula`); with ``gate`` (default
true, false in judge mode) any false boolean makes it 0. The result is clipped to [0, 1].

A judge without a value because it *errored* is left out, as agent-eval-harness does; but
where agent-eval-harness would then score 0 because nothing scored (every judge errored, the
reward judge errored, a formula naming an errored judge), this tool marks the sample
*errored* instead — it is excluded and listed, never counted as a zero.
A judge skipped by its condition (no value, no error) is simply absent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# the formula language and the resolved block live in the config layer (validated at load)
from eval_harness.config.formula import evaluate_formula, formula_names, parse_formula
from eval_harness.config.reward_model import RewardSpec

__all__ = ["DEFAULT_RANGE", "JudgeResult", "RewardSpec", "evaluate_formula", "formula_names",
           "judge_x", "parse_formula", "reward"]

#: agent-eval-harness's scale for a numeric judge that declares none
DEFAULT_RANGE = (1.0, 5.0)


@dataclass(frozen=True)
class JudgeResult:
    """One judge's value on one sample (None: no value)."""

    value: float | bool | None
    errored: bool = False


def _scaled(value: float, rng: tuple[float, float]) -> float:
    lo, hi = rng
    return min(1.0, max(0.0, (value - lo) / (hi - lo))) if hi > lo else 0.0


def judge_x(res: JudgeResult, rng: tuple[float, float], *, clip_only: bool = False) -> float | None:
    """x_j of one judge (None without a value)."""
    v = res.value
    if v is None or res.errored:
        return None
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if clip_only:
        return min(1.0, max(0.0, float(v)))
    return _scaled(float(v), rng)


def _ranges_for(names: Sequence[str], ranges: Mapping[str, tuple[float, float]],
                spec: RewardSpec | None) -> dict[str, tuple[float, float]]:
    fallback = (spec.score_range if spec and spec.score_range else None) or DEFAULT_RANGE
    return {n: ranges.get(n) or fallback for n in names}


def reward(results: Mapping[str, JudgeResult], ranges: Mapping[str, tuple[float, float]],
           spec: RewardSpec | None = None) -> tuple[float | None, bool]:
    """(reward in [0, 1] or None, errored) of one sample."""
    rng = _ranges_for(list(results), ranges, spec)
    gate = spec.gate if spec is not None else True
    if gate and any(r.value is False and not r.errored for r in results.values()):
        return 0.0, False
    if spec is None:
        xs = [judge_x(r, rng[n]) for n, r in results.items()
              if isinstance(r.value, (int, float)) and not isinstance(r.value, bool)]
        scored = [x for x in xs if x is not None]
        if scored:
            return sum(scored) / len(scored), False
        if any(r.errored for r in results.values()):
            return None, True
        return 1.0, False
    if spec.judge is not None:
        res = results.get(spec.judge, JudgeResult(None))
        if res.errored:
            return None, True
        x = judge_x(res, rng.get(spec.judge, DEFAULT_RANGE), clip_only=not spec.normalize)
        return (0.0 if x is None else x), False
    xs_all = {n: judge_x(r, rng[n], clip_only=n in spec.raw) for n, r in results.items()}
    if spec.formula.strip() == "weighted":
        total = weight_sum = 0.0
        for name, w in spec.weights.items():
            x = xs_all.get(name)
            if x is not None:
                total += w * x
                weight_sum += w
        if weight_sum > 0:
            return min(1.0, max(0.0, total / weight_sum)), False
        if any(results.get(n, JudgeResult(None)).errored for n in spec.weights):
            return None, True
        return 0.0, False
    variables = {n: x for n, x in xs_all.items() if x is not None}
    if any(r.errored and n in formula_names(spec.formula) for n, r in results.items()):
        return None, True
    try:
        value = float(evaluate_formula(spec.formula, variables))
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None, True
    if not math.isfinite(value):
        return None, True
    return min(1.0, max(0.0, value)), False
