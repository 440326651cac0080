"""Read agent-eval-harness run directories into this tool's record shape.

Layout of one such run (opendatahub-io/agent-eval-harness)::

    <run>/condition.json    {"condition_id": "<their id>", "levels": {factor: level}}
    <run>/summary.yaml      run_id, judges (aggregates), per_case: {case: {judge: {value,
                            rationale, judge_type[, score_range, errored, error]}}}
    <run>/run_result.json   run-level facts: model, cost_usd (whole run), num_turns

Each run becomes a RunRecord-like dict and one CaseRecord-like dict per case, scored the
way agent-eval-harness scores it (:class:`AehRule`, `eval_harness.judges.reward`): boolean
judges gate, numeric judges normalised over their declared range (from the eval.yaml when
one is passed, else the range recorded in the summary, else its default 1–5) and averaged,
or its `reward:` block. A run without `condition.json` takes its condition from the model
in `run_result.json` (`{"model": ...}`), as agent-eval-harness does. Several run
directories with the same levels are replications, numbered 1.. in natural order of
their run ids; a `-r<n>` suffix is not required. Their `condition_id` is kept as recorded
(it is not this tool's hash) but conditions are identified by their levels. The run's
`cost_usd` covers the whole run, so per-case cost stays unknown and the run total is
reported separately (`attrs["run_costs"]`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eval_harness.analysis.loading.runfiles import UnreadableRun, read_json_object
from eval_harness.config.yamlfast import fast_load
from eval_harness.config.yamlio import read_yaml_text
from eval_harness.judges.reward import DEFAULT_RANGE, JudgeResult, RewardSpec, reward

SUMMARY = "summary.yaml"
CONDITION = "condition.json"
RUN_RESULT = "run_result.json"


def is_aeh_run(names: set[str]) -> bool:
    """A directory listing that looks like an agent-eval-harness run."""
    return SUMMARY in names and "run.json" not in names


def _score(raw: Any) -> dict[str, Any]:
    """One per_case judge entry → a JudgeScore-like dict."""
    if not isinstance(raw, dict):
        raw = {"value": raw}
    value = raw.get("value")
    jtype = str(raw.get("judge_type") or "").lower()
    if jtype in ("boolean", "bool", "binary") or isinstance(value, bool):
        kind = "boolean"
    elif jtype == "pairwise" or isinstance(value, str):
        kind = "pairwise"
    else:
        kind = "numeric"
    out: dict[str, Any] = {"value": value, "kind": kind, "rationale": raw.get("rationale")}
    if raw.get("score_range"):
        out["score_range"] = raw["score_range"]
    if raw.get("errored") or raw.get("error"):
        out["errored"] = True
        out["error"] = raw.get("error")
    return out


@dataclass(frozen=True)
class AehRule:
    """How agent-eval-harness runs are scored: judge ranges and the `reward:` block."""

    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    reward: RewardSpec | None = None
    from_config: bool = False
    #: the config states this tool's own composite (gates, weights, a `composite` block):
    #: the loader forms the composite from it instead
    native_composite: bool = False
    #: its own rule for a case where nothing could be scored (every judge errored, the
    #: reward judge errored, a formula naming an errored judge): 0, not errored
    #: (``--aeh-errors zero``)
    errored_as_zero: bool = False

    def describe(self) -> str:
        """One line for the report saying which rule formed the composite."""
        if self.native_composite:
            return ("agent-eval-harness runs scored with the config's composite (its gates, "
                    "weights and score ranges)")
        lo, hi = (self.reward.score_range if self.reward and self.reward.score_range
                  else DEFAULT_RANGE)
        scale = (f"numeric judges normalised over their declared score_range, else "
                 f"[{lo:g}, {hi:g}]")
        where = "the config's" if self.from_config else "recorded or default"
        if self.reward is None:
            body = (f"boolean judges gate (a false one makes the case 0); {scale} "
                    f"({where} ranges) and averaged")
        elif self.reward.judge is not None:
            body = (f"reward.judge `{self.reward.judge}`"
                    + (" normalised over its range" if self.reward.normalize else " clipped to [0, 1]"))
        elif self.reward.formula.strip() == "weighted":
            body = f"reward weighted mean of {', '.join(self.reward.weights) or 'no judges'}; {scale}"
        else:
            body = f"reward formula `{self.reward.formula.strip()}`; {scale}"
        if self.reward is not None and self.reward.gate:
            body += "; boolean judges gate"
        tail = ("a case where nothing scored is 0, as agent-eval-harness scores it "
                "(--aeh-errors zero)" if self.errored_as_zero else
                "a case where nothing scored is errored (excluded), not 0 (--aeh-errors "
                "zero gives its 0)")
        return ("agent-eval-harness runs scored with its rule: " + body
                + "; an errored judge is left out, and " + tail)


def aeh_rule(config: Any) -> AehRule:
    """The rule for a config (an `EvalConfig`, {judge: JudgeSpec}, or None)."""
    if config is None:
        return AehRule()
    judges = getattr(config, "judges", None)
    ranges: dict[str, tuple[float, float]] = {}
    if judges is not None and not isinstance(config, Mapping):
        for j in judges:
            if getattr(j, "score_range", None):
                ranges[str(j.name)] = (float(j.score_range[0]), float(j.score_range[1]))
    elif isinstance(config, Mapping):
        for name, spec in config.items():
            rng = getattr(spec, "score_range", None) or (
                spec.get("score_range") if isinstance(spec, Mapping) else None)
            if rng:
                ranges[str(name)] = (float(rng[0]), float(rng[1]))
    block = getattr(config, "reward", None)
    spec = block.to_spec() if block is not None and hasattr(block, "to_spec") else None
    return AehRule(ranges=ranges, reward=spec, from_config=True,
                   native_composite=spec is None and _states_composite(config))


def _states_composite(config: Any) -> bool:
    """Whether a config sets this tool's composite knobs (gate, weight, `composite`)."""
    if getattr(config, "composite", None) is not None:
        return True
    items = config.values() if isinstance(config, Mapping) else getattr(config, "judges", [])
    for spec in items:
        get = spec.get if isinstance(spec, Mapping) else (lambda k, d=None, s=spec: getattr(s, k, d))
        if get("gate", False) or float(get("weight", 1.0) or 0.0) != 1.0 \
                or get("in_composite", True) is False:
            return True
    return False


def _result(raw: Any) -> JudgeResult | None:
    """A summary entry as a reward input; None for pairwise / non-numeric verdicts."""
    if not isinstance(raw, dict):
        raw = {"value": raw}
    value = raw.get("value")
    if str(raw.get("judge_type") or "").lower() == "pairwise":
        return None
    if value is None:
        return JudgeResult(None, errored=bool(raw.get("error") or raw.get("errored")))
    if isinstance(value, (bool, int, float)):
        return JudgeResult(value)
    return None


def _score_case(judges: dict[str, Any], rule: AehRule) -> tuple[dict[str, Any], float | None, bool]:
    """(judge score dicts, composite, composite errored) of one summary `per_case` entry."""
    scores = {str(j): _score(v) for j, v in judges.items()}
    results: dict[str, JudgeResult] = {}
    ranges = dict(rule.ranges)
    for name, raw in judges.items():
        res = _result(raw)
        if res is None:
            continue
        results[str(name)] = res
        recorded = scores[str(name)].get("score_range")
        if str(name) not in ranges and isinstance(recorded, list) and len(recorded) == 2:
            ranges[str(name)] = (float(recorded[0]), float(recorded[1]))
    fallback = (rule.reward.score_range if rule.reward and rule.reward.score_range
                else DEFAULT_RANGE)
    for name, sc in scores.items():
        if sc["kind"] == "numeric" and isinstance(sc["value"], (int, float)) \
                and not isinstance(sc["value"], bool) and not sc.get("errored"):
            rng = ranges.get(name, fallback)
            sc["score_range"] = [rng[0], rng[1]]
    value, errored = reward(results, ranges, rule.reward)
    return scores, value, errored


def read_summary(run_dir: str) -> dict[str, Any]:
    """A run's summary.yaml as a mapping (its ``per_case`` a mapping); UnreadableRun when it
    cannot be read. Bounded (size, alias expansion, depth) and duplicate keys refused
    (config.yamlio), read through the fast path where that gives the same data
    (config.yamlfast)."""
    try:
        summary = fast_load(read_yaml_text(os.path.join(run_dir, SUMMARY), nofollow=True)) or {}
    except (OSError, ValueError) as exc:  # YamlProblem and UnicodeDecodeError are ValueErrors
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise UnreadableRun(f"{SUMMARY}: {first}") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("per_case") or {}, dict):
        raise UnreadableRun(f"{SUMMARY}: not a mapping with a per_case mapping")
    return summary


def run_dict(run_dir: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """The run dict of an agent-eval-harness run (see :func:`read_aeh_run`)."""
    condition = read_json_object(os.path.join(run_dir, CONDITION))
    result = read_json_object(os.path.join(run_dir, RUN_RESULT))
    run_id = str(summary.get("run_id") or os.path.basename(os.path.normpath(run_dir)))
    cost = result.get("cost_usd")
    levels = condition.get("levels") or summary.get("levels") or {}
    if not levels and isinstance(result.get("model"), str) and result["model"]:
        levels = {"model": result["model"]}  # agent-eval-harness's fallback
    facts = case_facts(result)
    return {
        "case_facts": facts,
        "eval": str(summary.get("eval") or os.path.basename(os.path.dirname(os.path.normpath(run_dir)))),
        "run_id": run_id,
        "condition_id": str(condition.get("condition_id") or ""),
        "levels": levels,
        "cost_usd": float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        "finished_at": summary.get("finished_at"),
        "format": "agent-eval-harness",
    }


def case_record(case_id: Any, judges: Any, rule: AehRule) -> dict[str, Any]:
    """One ``per_case`` entry as a CaseRecord-like dict (no replication)."""
    if not isinstance(judges, dict):
        judges = {}  # no judge entries: the case is recorded with no scores
    if rule.native_composite:
        scores, value, errored = {str(j): _score(v) for j, v in judges.items()}, None, False
    else:
        scores, value, errored = _score_case(judges, rule)
    rec: dict[str, Any] = {"case_id": str(case_id), "status": "ok", "scores": scores}
    if errored and rule.errored_as_zero:
        rec["composite"] = 0.0
    elif errored:
        rec["composite_errored"] = True
    elif value is not None and scores:
        rec["composite"] = value
    return rec


def assumed_ranges(per_case: Mapping[Any, Any], rule: AehRule) -> set[str]:
    """Numeric judges whose range neither the config nor the summary states (they are
    normalised over the fallback, [1, 5] unless ``reward.score_range`` says otherwise)."""
    named = set(rule.ranges)
    seen: set[str] = set()
    stated: set[str] = set()
    for judges in per_case.values():
        if not isinstance(judges, Mapping):
            continue
        for name, raw in judges.items():
            sc = _score(raw)
            if sc["kind"] != "numeric" or str(name) in named:
                continue
            seen.add(str(name))
            if sc.get("score_range"):
                stated.add(str(name))
    return seen - stated


def case_facts(result: Mapping[str, Any]) -> dict[str, tuple[float, float, float]]:
    """case id -> (latency s, cost USD, tokens) from ``run_result.json``'s ``per_case``
    (``duration_s``, ``cost_usd``, ``token_usage`` summed over its input/output counts);
    NaN where a value is not stated."""
    nan = float("nan")

    def num(v: Any) -> float:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else nan

    out: dict[str, tuple[float, float, float]] = {}
    per_case = result.get("per_case")
    if not isinstance(per_case, Mapping):
        return out
    for case_id, facts in per_case.items():
        if not isinstance(facts, Mapping):
            continue
        usage = facts.get("token_usage")
        tokens = nan
        if isinstance(usage, Mapping):
            parts = [num(usage.get(k)) for k in ("input_tokens", "output_tokens")]
            tokens = num(usage.get("total_tokens")) if usage.get("total_tokens") is not None \
                else (sum(parts) if not any(p != p for p in parts) else nan)
        elif isinstance(usage, (int, float)):
            tokens = num(usage)
        out[str(case_id)] = (num(facts.get("duration_s")), num(facts.get("cost_usd")), tokens)
    return out


def read_aeh_run(run_dir: str, rule: AehRule | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(run dict, case record dicts) of one agent-eval-harness run directory.

    The run dict has `eval`, `run_id`, `condition_id`, `levels`, `cost_usd` (run total or
    None) and `finished_at` (None: the layout records no time); records have no
    `replication` (assigned by the loader over runs with the same levels).
    """
    summary = read_summary(run_dir)
    rule = rule or AehRule()
    per_case = summary.get("per_case") or {}
    return run_dict(run_dir, summary), [case_record(c, j, rule) for c, j in per_case.items()]
