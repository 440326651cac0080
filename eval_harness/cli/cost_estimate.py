"""The dry-run's price-table estimate: per condition and per LLM judge, point and upper
bound (the arithmetic is :mod:`eval_harness.pricing.dry_run_cost`; docs/cost.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval_harness.config.models import EvalConfig
from eval_harness.matrix.experiment import Experiment
from eval_harness.pricing.dry_run_cost import (
    CHARS_PER_TOKEN,
    JUDGE_OVERHEAD_TOKENS,
    POINT_REPLY_TOKENS,
    POINT_VERDICT_TOKENS,
    Tokens,
    cost_range,
    from_prompt,
    measured,
    text_tokens,
)
from eval_harness.pricing.table import resolve_rates, shipped
from eval_harness.store.history import Earlier

#: cases whose prompts are rendered per condition (evenly spaced; the mean stands for all)
PROMPT_SAMPLE = 200
_THINKING = {"low": 1024, "medium": 4096, "high": 16384}


def _prompt_chars(exp: Experiment, cfg: EvalConfig, cond: Any) -> float:
    """Mean characters of the rendered user message (+ system prompt) over sampled cases."""
    from eval_harness.runner.contract import RunRequest
    from eval_harness.runner.llm import user_message

    cases = exp.cases
    step = max(1, len(cases) // PROMPT_SAMPLE)
    sample = cases[::step][:PROMPT_SAMPLE]
    system = len(cfg.runner.system or "") if cfg.runner else 0
    total = 0
    for case in sample:
        request = RunRequest(case_id=case.case_id, input={**case.input, **cond.input_overrides},
                             condition_id=cond.condition_id, levels=cond.levels, replication=1,
                             model=None, effort=cond.effort, subagent_model=None, config=cfg,
                             config_dir=exp.loaded.base_dir, case_dir=Path("."))
        total += len(user_message(cfg, request)) + system
    return total / max(1, len(sample))


def _reply_cap(cfg: EvalConfig, effort: Any) -> int | None:
    runner = cfg.runner
    cap = runner.max_tokens if runner else None
    if runner is not None and runner.type == "anthropic":
        cap = cap or 4096
        budget = effort if isinstance(effort, int) else _THINKING.get(str(effort).lower())
        cap += budget or 0
    return cap


def table_estimate(exp: Experiment, earlier: Earlier) -> dict[str, Any] | None:
    """Point and upper-bound USD per condition, per LLM judge and in total. API runners
    (openai, anthropic) are estimated from measured tokens, else prompt length; any other
    runner only from tokens measured on earlier runs. None when nothing can be priced."""
    base = exp.loaded.config
    api = base.runner is not None and base.runner.type in ("openai", "anthropic")
    by_condition, by_judge = earlier.by_condition, earlier.by_judge
    if not api and not by_condition and not any(j.is_llm for j in base.judges):
        return None
    runs = len(exp.cases) * exp.replications
    conditions, unpriced = [], set()
    reply_chars: list[float] = []
    for cond in exp.conditions:
        cfg = exp.effective[cond.condition_id]
        model = cond.model if cond.model is not None else cfg.models.skill
        cap = _reply_cap(cfg, cond.effort)
        m = by_condition.get(cond.condition_id)
        tokens = (m and measured(m.input, m.output, m.n, cap or 0)) or (from_prompt(
            _prompt_chars(exp, cfg, cond), cap, POINT_REPLY_TOKENS) if api else None)
        found = resolve_rates(model, cfg.pricing, cfg.runner.pricing if cfg.runner else None)
        row: dict[str, Any] = {"condition_id": cond.condition_id, "label": cond.label,
                               "model": model, "runs": runs, "point_usd": None,
                               "upper_usd": None, "price": None,
                               "tokens": tokens.source if tokens else "not measured yet"}
        if tokens is None:
            conditions.append(row)
            continue
        reply_chars.append(tokens.output * CHARS_PER_TOKEN)
        if found is None:
            unpriced.add(str(model))
        else:
            row["point_usd"], row["upper_usd"] = cost_range(found[0], tokens, runs)
            row["price"] = found[1]
        conditions.append(row)
    answer_chars = (sum(reply_chars) / len(reply_chars) if reply_chars
                    else POINT_REPLY_TOKENS * CHARS_PER_TOKEN)
    judges = _judges(exp, by_judge, answer_chars, unpriced)
    rows = conditions + judges
    point = [r["point_usd"] for r in rows]
    upper = [r["upper_usd"] for r in rows]
    total_point = sum(p for p in point if p is not None)
    judge_point = sum(j["point_usd"] or 0.0 for j in judges)
    return {"price_table_date": shipped()["date"], "conditions": conditions, "judges": judges,
            "point_usd": total_point, "upper_usd": sum(u for u in upper if u is not None),
            "judges_share": judge_point / total_point if total_point else None,
            "complete": None not in point, "unpriced_models": sorted(unpriced)}


def _judges(exp: Experiment, by_judge: dict[str, Any], answer_chars: float,
            unpriced: set[str]) -> list[dict[str, Any]]:
    cfg = exp.loaded.config
    sample = exp.cases[:PROMPT_SAMPLE]
    input_chars = sum(len(json.dumps(c.input, default=str)) for c in sample) / max(1, len(sample))
    out = []
    from eval_harness.pricing.table import Rates

    for block in cfg.judges:
        if not block.is_llm or block.pairwise is not None:
            continue
        model = str(block.model or cfg.models.judge or "")
        if not model:  # validation reports it; nothing to price
            continue
        name = model.partition(":")[2] if ":" in model else model
        template = block.prompt or ""
        chars = len(template) + answer_chars + (input_chars if "input" in template else 0)
        m = by_judge.get(block.name)
        tokens = (m and measured(m.input, m.output, m.n, block.max_tokens)) or Tokens(
            JUDGE_OVERHEAD_TOKENS + text_tokens(chars), min(block.max_tokens, POINT_VERDICT_TOKENS),
            block.max_tokens, "prompt length")
        calls = exp.total_runs * block.samples
        found = ((Rates(*block.cost_per_mtok), "config") if block.cost_per_mtok
                 else resolve_rates(name))
        row: dict[str, Any] = {"judge": block.name, "model": model, "calls": calls,
                               "tokens": tokens.source, "point_usd": None, "upper_usd": None,
                               "price": None}
        if found is None:
            unpriced.add(model)
        else:
            row["point_usd"], row["upper_usd"] = cost_range(found[0], tokens, calls)
            row["price"] = found[1]
        out.append(row)
    return out
