"""Judge specifications and the per-sample composite, for records that lack one (imports).

The composite of one sample is the weighted mean of the normalised values of the judges
that enter it, gated by the boolean gate judges (DESIGN.md "Statistics"):

    composite = 0                                   if any gate judge is false
              = Σ_j w_j · x̃_j / Σ_j w_j            otherwise (j over non-gate judges)
              = 1                                   when only gates enter and all pass

    x̃_j = 0/1 for booleans;  (x_j − lo_j) / (hi_j − lo_j) clipped to [0, 1] for numbers
          with a score range [lo_j, hi_j].

Gate judges gate and do not also enter the mean (agent-eval-harness's composite: the
`tests_pass` gate, otherwise the normalised `solution_quality`). A sample with any
entering judge errored has an errored composite (never 0). Pairwise judges never enter.

Without a config (no judge specs) a composite is computed only when every entering judge
can be normalised from the data itself: booleans, or numbers whose record carries a
`score_range` or a `normalized` value. Then all weights are 1 and no judge is a gate
(nothing in the data says otherwise). Otherwise the composite is left out (NaN, not
errored) and the judges are analysed on their own; the loader notes why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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
                gate=spec.gate or name in composite.gates,
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
    gate_failed = False
    gates = 0
    num = 0.0
    den = 0.0
    unknown = False
    for v in values:
        if v.errored:
            return NAN, True
        if v.gate:
            gates += 1
            if math.isnan(v.normalized):
                unknown = True
            elif v.normalized < 0.5:
                gate_failed = True
            continue
        if math.isnan(v.normalized):
            unknown = True
        elif v.weight > 0:
            num += v.weight * v.normalized
            den += v.weight
    if gate_failed:
        return 0.0, False
    if unknown:
        return NAN, False
    if den > 0:
        return num / den, False
    return (1.0, False) if gates else (NAN, False)
