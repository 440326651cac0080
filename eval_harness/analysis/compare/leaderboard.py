"""Leaderboard: conditions ranked by quality with CIs, then cost and latency.

- Ranking uses the cases every condition answered (at least one usable attempt each), so
  all conditions are scored on the same items; the others are listed as excluded.
  Quality = mean over cases of the per-case mean composite (the per-case pass rate when no
  composite is available: ``quality_metric`` says which), with a t CI over cases
  (df n − 1, clipped to [0, 1]); ties are broken by lower mean cost, then lower mean
  latency (per-case means over every case the condition answered; unknown cost is skipped).
- Paired differences to the leader: per-case composite differences, paired t CI, and
  Holm-adjusted p over the k − 1 comparisons (R ``p.adjust(p, "holm")``). A condition is
  "indistinguishable from the best" when its adjusted p ≥ alpha (the leader always is).
- Per-stratum breakdown by a case tag (``df.attrs["case_tags"]``): the same means per tag
  value, without ranking tests.
- Saturation: cases every condition passed (verdict passed) and cases every condition
  failed (verdict failed) — they cannot tell conditions apart; consider replacing them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.build import _label, _levels, condition_table
from eval_harness.analysis.compare.compare import num
from eval_harness.analysis.compare.paired import holm_adjust, paired_t
from eval_harness.analysis.compare.verdicts import VerdictRule, case_verdicts, sample_table
from eval_harness.errors import AnalysisError, UsageError


def _mean_ci(values: np.ndarray) -> dict[str, Any]:
    t = paired_t(values)  # a one-sample t on per-case means is the same computation
    # The composite lives in [0, 1]: clip the t interval to it.
    lo, hi = (min(max(x, 0.0), 1.0) if math.isfinite(x) else x for x in t.ci)
    return {"mean": num(t.estimate), "ci": [num(lo), num(hi)], "n_cases": t.n}


def build_leaderboard(
    frame: pd.DataFrame,
    *,
    alpha: float = 0.05,
    stratify_by: str | None = None,
    rule: VerdictRule | None = None,
    cases: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The leaderboard document (JSON-ready). ``stratify_by`` names a case tag;
    ``cases``: ``case_verdicts(sample_table(frame, rule))`` when the caller has it."""
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must be in (0, 1), got {alpha}")
    if frame.empty:
        raise AnalysisError("no runs for the leaderboard")
    if cases is None:
        cases = case_verdicts(sample_table(frame, rule or VerdictRule()))
    factors = [f for f in frame.attrs.get("factors", []) if f in frame.columns]
    conds = condition_table(frame)
    cids = conds["condition_id"].astype(str).tolist()
    usable = cases[cases["verdict"] != "errored"]
    metric = "composite"
    comp = usable.pivot_table(
        index="case_id", columns="condition_id", values="composite_mean", aggfunc="first",
        observed=True,
    ).reindex(columns=cids)
    if comp.dropna(axis=0, how="any").empty:
        # No composite anywhere (e.g. a judge without score range): rank by pass rate.
        metric = "pass_rate"
        comp = usable.pivot_table(
            index="case_id", columns="condition_id", values="pass_rate", aggfunc="first",
            observed=True,
        ).reindex(columns=cids)
    complete = comp.dropna(axis=0, how="any")
    excluded = sorted(set(cases["case_id"].astype(str)) - set(complete.index.astype(str)))
    costs = cases.groupby("condition_id", observed=True)["cost_usd"].mean()
    lats = cases.groupby("condition_id", observed=True)["latency_s"].mean()
    rates = usable.pivot_table(
        index="case_id", columns="condition_id", values="pass_rate", aggfunc="first",
        observed=True,
    ).reindex(index=complete.index, columns=cids)
    rows = []
    for _, r in conds.iterrows():
        cid = str(r["condition_id"])
        lv = _levels(r, factors)
        rows.append(
            {
                "condition_id": cid,
                "levels": lv,
                "label": _label(lv, cid),
                "quality": _mean_ci(complete[cid].to_numpy()),
                "pass_rate": num(rates[cid].mean()) if len(rates) else None,
                "cost_usd": num(costs.get(cid, math.nan)),
                "latency_s": num(lats.get(cid, math.nan)),
            }
        )

    def key(row: dict[str, Any]) -> tuple[float, float, float]:
        def val(x: Any, sign: float) -> float:
            return sign * x if x is not None else math.inf

        return (
            val(row["quality"]["mean"], -1.0),
            val(row["cost_usd"], 1.0),
            val(row["latency_s"], 1.0),
        )

    rows.sort(key=key)
    for i, row in enumerate(rows, start=1):
        row["rank"] = i
    _leader_diffs(rows, complete, alpha)
    return {
        "schema_version": 1,
        "kind": "eval_harness.leaderboard",
        "alpha": alpha,
        "correction": "holm",
        "quality_metric": metric,
        "pass_rule": (rule or VerdictRule()).text(),
        "n_cases": len(complete),
        "excluded_cases": excluded,
        "leader": rows[0]["condition_id"] if rows else None,
        "conditions": rows,
        "saturation": saturation(cases, cids),
        "strata": _strata(frame, complete, cids, stratify_by) if stratify_by else None,
    }


def _leader_diffs(rows: list[dict[str, Any]], complete: pd.DataFrame, alpha: float) -> None:
    if not rows:
        return
    leader = rows[0]["condition_id"]
    tests = [
        paired_t((complete[r["condition_id"]] - complete[leader]).to_numpy()) for r in rows[1:]
    ]
    adj = holm_adjust([t.p for t in tests])
    rows[0]["vs_leader"] = None
    rows[0]["indistinguishable_from_best"] = True
    for row, t, p_adj in zip(rows[1:], tests, adj, strict=True):
        row["vs_leader"] = {
            "estimate": num(t.estimate),
            "se": num(t.se),
            "df": num(t.df),
            "ci": [num(t.ci[0]), num(t.ci[1])],
            "p_raw": num(t.p),
            "p_adjusted": num(p_adj),
        }
        # NaN p (zero spread, one case): distinguishable only if the difference is nonzero.
        if math.isfinite(p_adj):
            row["indistinguishable_from_best"] = bool(p_adj >= alpha)
        else:
            row["indistinguishable_from_best"] = bool(t.n == 0 or abs(t.estimate) < 1e-12)


def saturation(cases: pd.DataFrame, cids: list[str]) -> dict[str, Any]:
    """Cases every condition passed / every condition failed (errored anywhere: neither)."""
    verdicts = cases.pivot_table(
        index="case_id", columns="condition_id", values="verdict", aggfunc="first", observed=True
    ).reindex(columns=cids)
    full = verdicts.dropna(axis=0, how="any")
    solved = sorted(str(c) for c in full.index[(full == "passed").all(axis=1).to_numpy()])
    failed = sorted(str(c) for c in full.index[(full == "failed").all(axis=1).to_numpy()])
    n = len(verdicts)
    return {
        "solved_by_all": solved,
        "failed_by_all": failed,
        "n_cases": n,
        "saturated_fraction": num((len(solved) + len(failed)) / n) if n else None,
    }


def _strata(
    frame: pd.DataFrame, complete: pd.DataFrame, cids: list[str], tag: str
) -> dict[str, Any]:
    tags = frame.attrs.get("case_tags", {}) or {}
    values = pd.Series(
        {c: str(tags.get(str(c), {}).get(tag, "(untagged)")) for c in complete.index}
    )
    out: dict[str, Any] = {"tag": tag, "strata": {}}
    rows: dict[str, list[int]] = {}  # level -> row positions (one pass, not one per level)
    for i, level in enumerate(values.tolist()):
        rows.setdefault(level, []).append(i)
    for level in sorted(rows):
        sub = complete.iloc[rows[level]]
        out["strata"][level] = {
            "n_cases": len(sub),
            "conditions": {cid: _mean_ci(sub[cid].to_numpy()) for cid in cids},
        }
    return out
