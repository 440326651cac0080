"""The fields agent-eval-harness's anova.json consumers read, computed from this tool's results.

Its ``skills/eval-anova/scripts/report.py`` and ``/eval-compare`` read ``anova``
(one factor: ``factor``, ``f_statistic``, ``p_value``, ``significant``, ``method``,
``alpha``, ``details[0].ng2``; several: ``factors``, ``p_values``, ``p_adjusted``,
``significant`` per term, ``correction``, ``family_size``), ``condition_summaries`` with
each factor's level flattened and ``mean``/``std``/``n``, ``pareto_frontier`` (entries with
``cost`` and ``mean``), ``per_case`` and ``design``. This module adds them beside this
tool's fields (``n`` keeps this tool's meaning — cases —; its meaning, composite rows, is
``n_rows``). Numbers are this tool's: the p of a term is its joint F test
(docs/migrating-from-agent-eval-harness.md explains how that differs); ``p_value`` /
``p_values`` hold the *adjusted* p (the one ``significant`` is decided on), the raw p is
``p_value_raw`` / ``p_values_raw``.

Generalised η² (Olejnik & Algina 2003) for a one-factor repeated-measures design, as its
``ng2``: ``SS_A / (SS_A + SS_cases + SS_A×case)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from eval_harness._util.numbers import run_number
from eval_harness.analysis.anova.condition_summaries import pareto_front


def _composite(frame: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """The usable composite rows, with only ``columns`` (those that exist) when given:
    filtering every column of a large frame would copy all of them."""
    if columns is not None:
        keep = ["judge", "errored", "value", *columns]
        frame = frame[[c for c in dict.fromkeys(keep) if c in frame.columns]]
    ok = frame["value"].notna().to_numpy().copy()
    if "judge" in frame:
        is_comp = (frame["judge"] == "composite").to_numpy(dtype=bool, na_value=False)
        ok &= is_comp & ~frame["errored"].to_numpy(dtype=bool)
    return frame[ok]



def _ng2(frame: pd.DataFrame, factor: str, term: Mapping[str, Any]) -> float | None:
    ss, ss_err = run_number(term.get("ss")), run_number(term.get("ss_error"))
    if ss is None or ss_err is None:
        return None
    comp = _composite(frame, ["case_id", factor])
    wide = comp.groupby(["case_id", factor], observed=True)["value"].mean().unstack().dropna()
    if wide.empty:
        return None
    k = wide.shape[1]
    with np.errstate(all="ignore"):
        ss_cases = float(k * ((wide.mean(axis=1) - wide.to_numpy().mean()) ** 2).sum())
    total = ss + ss_cases + ss_err
    return run_number(ss / total) if total > 0 and math.isfinite(total) else None


def _anova_block(anova: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    factors = list((anova.get("design") or {}).get("factors") or {})
    terms: Mapping[str, Any] = anova.get("terms") or {}
    method = anova.get("method") or {}
    label = f"{method.get('name', 'rm')} ({method.get('label', '')})".strip()
    common = {"correction": anova.get("correction"), "alpha": anova.get("alpha"),
              "family_size": anova.get("family_size"), "method": label}
    excluded = [e.get("term") for e in anova.get("excluded_terms") or []]
    if not factors or not terms:
        return {**common, "factor": factors[0] if factors else None, "factors": factors,
                "f_statistic": None, "p_value": None, "p_adjusted": None, "significant": False,
                "note": "; ".join(anova.get("notes") or []) or "no term could be tested",
                "excluded_terms": excluded}
    if len(factors) == 1 and factors[0] in terms:
        f = factors[0]
        t = terms[f]
        return {**common, "factor": f, "f_statistic": run_number(t.get("F")),
                "p_value": run_number(t.get("p_adjusted")), "p_value_raw": run_number(t.get("p_raw")),
                "p_uncorrected": run_number(t.get("p_uncorrected")),
                "p_adjusted": run_number(t.get("p_adjusted")), "significant": bool(t.get("significant")),
                "details": [{"Source": f, "F": run_number(t.get("F")), "ddof1": t.get("df_num"),
                             "ddof2": t.get("df_den"), "ng2": _ng2(frame, f, t),
                             "eps": t.get("gg_epsilon")}],
                "excluded_terms": excluded}
    return {**common, "factors": factors,
            # its consumers show `p_values` beside `significant`: the adjusted p, on which
            # the verdict is decided (raw p under `p_values_raw`)
            "p_values": {name: run_number(t.get("p_adjusted")) for name, t in terms.items()},
            "p_values_raw": {name: run_number(t.get("p_raw")) for name, t in terms.items()},
            "p_adjusted": {name: run_number(t.get("p_adjusted")) for name, t in terms.items()},
            "significant": {name: bool(t.get("significant")) for name, t in terms.items()},
            "f_statistics": {name: run_number(t.get("F")) for name, t in terms.items()},
            "excluded_terms": excluded}


def _pareto(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Conditions no other beats on both cost (lower) and mean (higher)
    (:func:`~eval_harness.analysis.anova.condition_summaries.pareto_front`, ties kept),
    cheapest first; all when a cost or mean is missing (no cost axis)."""
    if not summaries or any(run_number(s.get("cost")) is None or run_number(s.get("mean")) is None
                            for s in summaries):
        return summaries
    front = pareto_front([(str(i), float(s["cost"]), float(s["mean"]))
                          for i, s in enumerate(summaries)])
    return sorted((summaries[int(i)] for i in front), key=lambda s: s["cost"])


def _per_case(comp: pd.DataFrame, factors: list[str]) -> dict[str, dict[str, float | None]]:
    """{"a=x, b=y" (or "x" with one factor): {case_id: mean composite}} in sorted group
    order. Groups are sorted, so each level combination is one contiguous block: its key
    is formatted once per block, not once per case."""
    grouped = comp.groupby([*factors, "case_id"], dropna=False, observed=True)["value"].mean()
    index = grouped.index
    assert isinstance(index, pd.MultiIndex)  # at least one factor plus case_id
    level_codes = [np.asarray(c, dtype=np.int64) for c in index.codes]
    cases = index.levels[-1]
    case_text = np.array([str(c) for c in cases] + ["nan"], dtype=object)[level_codes[-1]]
    values = grouped.to_numpy(dtype=float)
    finite = np.isfinite(values)
    shown: list[float | None] = values.tolist()
    for i in np.flatnonzero(~finite).tolist():
        shown[i] = None
    prefix = np.stack(level_codes[:-1], axis=1)
    starts = np.flatnonzero(np.r_[True, (prefix[1:] != prefix[:-1]).any(axis=1)])
    ends = np.r_[starts[1:], len(values)]
    per_case: dict[str, dict[str, float | None]] = {}
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        levels = [index.levels[i][c] if c >= 0 else np.nan
                  for i, c in enumerate(prefix[start].tolist())]
        key = (str(levels[0]) if len(factors) == 1
               else ", ".join(f"{f}={v}" for f, v in zip(factors, levels, strict=True)))
        per_case.setdefault(key, {}).update(zip(case_text[start:end].tolist(), shown[start:end],
                                                strict=True))
    return per_case


def aeh_fields(anova: Mapping[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """``anova`` with agent-eval-harness's fields added (a new dict; nothing removed)."""
    out = dict(anova)
    factors: list[str] = list(frame.attrs.get("factors") or [])
    level_names = {f for s in anova.get("condition_summaries") or [] for f in s.get("levels") or {}}
    comp = _composite(frame, [*factors, *sorted(level_names), "case_id"])
    run_cost: dict[str, list[float]] = {}
    for rc in frame.attrs.get("run_costs") or []:
        run_cost.setdefault(str(rc.get("condition_id")), []).append(float(rc["cost_usd"]))
    codes = {f: pd.factorize(comp[f], use_na_sentinel=False) for f in level_names if f in comp}
    all_values = comp["value"].to_numpy()
    summaries = []
    for s in anova.get("condition_summaries") or []:
        s = dict(s)
        levels = s.get("levels") or {}
        sel = np.ones(len(comp), dtype=bool)
        for f, v in levels.items():
            if f in codes:  # comp[f] == v, compared once per distinct level
                f_codes, uniques = codes[f]
                hits = np.flatnonzero(np.asarray(pd.Series(uniques) == v, dtype=bool))
                sel &= np.isin(f_codes, hits)
        values = all_values[sel]
        for f, v in levels.items():
            s.setdefault(f, v)  # flattened level, unless it would hide one of our fields
        n = len(values)
        s["n_rows"] = n
        with np.errstate(all="ignore"):  # huge values: a non-finite spread is null
            s["std"] = run_number(float(np.std(values, ddof=1))) if n > 1 else (0.0 if n else None)
        s["min"] = run_number(float(values.min())) if n else None
        s["max"] = run_number(float(values.max())) if n else None
        costs = run_cost.get(str(s.get("condition_id")))
        if costs and run_number(sum(costs)) is not None:
            s["cost"] = sum(costs) / len(costs)
        summaries.append(s)
    out["condition_summaries"] = summaries
    out["anova"] = _anova_block(anova, frame)
    out["pareto_frontier"] = _pareto(summaries)
    factors = sorted(factors)  # its key order: "a=x, b=y" over sorted factor names
    per_case = _per_case(comp, factors) if factors and len(comp) else {}
    out["per_case"] = per_case
    out["n_runs"] = int(frame["run_id"].nunique()) if "run_id" in frame else 0
    out["n_conditions"] = len(summaries)
    return out
