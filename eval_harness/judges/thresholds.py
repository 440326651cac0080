"""Thresholds, per condition, over the tidy frame (docs/api.md, the tidy frame).

``thresholds`` in the config::

    thresholds:
      min_pass_rate: 0.8      # composite: share of samples with composite >= pass_score
      min_mean: 0.7           # composite: mean composite
      pass_score: 0.5         # composite pass cut-off (default 0.5)
      judges:
        correct: {min_pass_rate: 0.9}            # boolean: share true
        quality: {min_mean: 3.5, pass_score: 4}  # numeric: raw-scale mean; pass = value >= 4
                                                 # (default pass: normalised value >= 0.5)

Errored samples are excluded from both statistics (never counted as 0) and reported as
``n_errored``; a condition with no usable sample *fails* the threshold (value None), so a
judge that errors everywhere cannot pass a gate. The lead's pipeline exits 1 when any result
has ``passed: false``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from eval_harness.config.judge_model import ThresholdsBlock, ThresholdSpec


def _block(config: Any) -> ThresholdsBlock | None:
    if config is None or isinstance(config, ThresholdsBlock):
        return config
    if isinstance(config, dict):
        return ThresholdsBlock.model_validate(config)
    return getattr(config, "thresholds", None)


def _passes(rows: pd.DataFrame, target: str, spec: ThresholdSpec | None,
            composite_cut: float) -> pd.Series:
    if target == "composite":
        return rows["value"] >= composite_cut
    if spec is not None and spec.pass_score is not None and (rows["kind"] == "numeric").all():
        return rows["value"] >= spec.pass_score
    return rows["normalized"].fillna(rows["value"]) >= 0.5


def _checks(block: ThresholdsBlock) -> list[tuple[str, str, float, ThresholdSpec | None]]:
    out: list[tuple[str, str, float, ThresholdSpec | None]] = []
    if block.min_pass_rate is not None:
        out.append(("composite", "min_pass_rate", block.min_pass_rate, None))
    if block.min_mean is not None:
        out.append(("composite", "min_mean", block.min_mean, None))
    for name, spec in block.judges.items():
        if spec.min_pass_rate is not None:
            out.append((name, "min_pass_rate", spec.min_pass_rate, spec))
        if spec.min_mean is not None:
            out.append((name, "min_mean", spec.min_mean, spec))
        if spec.max_error_rate is not None:
            out.append((name, "max_error_rate", spec.max_error_rate, spec))
    return out


def win_rate_results(block: ThresholdsBlock, pairwise: dict[str, Any] | None
                     ) -> list[dict[str, Any]]:
    """``min_win_rate`` of pairwise judges: one result per compared pair (its ``a``
    condition's win rate in pairwise.json); a judge with no comparison fails (value None)."""
    out: list[dict[str, Any]] = []
    judges = (pairwise or {}).get("judges", {})
    for name, spec in block.judges.items():
        if spec.min_win_rate is None:
            continue
        pairs = judges.get(name, {}).get("pairs", [])
        for pair in pairs or [{}]:
            summary = pair.get("summary", {})
            value = summary.get("win_rate")
            out.append({"condition_id": pair.get("a"), "levels": pair.get("levels_a", {}),
                        "target": name, "metric": "min_win_rate", "value": value,
                        "threshold": spec.min_win_rate, "against": pair.get("b"),
                        "passed": value is not None and value >= spec.min_win_rate,
                        "n": summary.get("n", 0), "n_errored": summary.get("errored", 0)})
    return out


def evaluate_thresholds(frame: pd.DataFrame, config: Any,
                        pairwise: dict[str, Any] | None = None,
                        samples: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """One result per (condition, target, metric): {condition_id, levels, target, metric,
    value, threshold, passed, n, n_errored}; ``max_error_rate`` passes at or below its
    threshold; ``min_win_rate`` reads the pairwise document (:func:`win_rate_results`).

    ``samples``: the per-attempt table of the analysis' pass rule (columns condition_id,
    passed: 1/0, NaN when errored); when given, the composite ``min_pass_rate`` is its
    pass rate, so thresholds, reports and comparisons count passes the same way."""
    block = _block(config)
    if block is None:
        return []
    wins = win_rate_results(block, pairwise)
    if frame.empty:
        return wins
    factors = list(frame.attrs.get("factors", []))
    results: list[dict[str, Any]] = []
    for cid, group in frame.groupby("condition_id", sort=False, observed=True):
        first = group.iloc[0]
        levels = {f: first[f] for f in factors if f in group.columns}
        for target, metric, threshold, spec in _checks(block):
            rows = group[group["judge"] == target]
            usable = rows[~rows["errored"].astype(bool) & rows["value"].notna()]
            value: float | None = None
            if metric == "max_error_rate":  # errored / (errored + scored); skips not counted
                n_err = int(rows["errored"].astype(bool).sum())
                total = n_err + len(usable)
                value = n_err / total if total else 0.0
                results.append({
                    "condition_id": str(cid), "levels": levels, "target": target,
                    "metric": metric, "value": value, "threshold": threshold,
                    "passed": value <= threshold, "n": len(usable), "n_errored": n_err})
                continue
            if samples is not None and target == "composite" and metric == "min_pass_rate":
                mine = samples.loc[samples["condition_id"].astype(str) == str(cid), "passed"]
                usable, n_all = mine[mine.notna()], len(mine)
                value = float(usable.mean()) if len(usable) else None
                results.append({
                    "condition_id": str(cid), "levels": levels, "target": target,
                    "metric": metric, "value": value, "threshold": threshold,
                    "passed": value is not None and value >= threshold,
                    "n": len(usable), "n_errored": n_all - len(usable)})
                continue
            if len(usable):
                if metric == "min_mean":
                    value = float(usable["value"].mean())
                else:
                    value = float(_passes(usable, target, spec, block.pass_score).mean())
            results.append({
                "condition_id": str(cid), "levels": levels, "target": target, "metric": metric,
                "value": value, "threshold": threshold,
                "passed": value is not None and value >= threshold,
                "n": len(usable), "n_errored": len(rows) - len(usable),
            })
    return results + wins
