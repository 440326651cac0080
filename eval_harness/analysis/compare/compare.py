"""Compare one candidate condition with a reference condition, case by case and overall.

Inputs are two per-case verdict tables (``verdicts.case_verdicts`` restricted to one
condition each; the reference may come from a baseline file). Every case falls in exactly
one status, decided in this order:

- ``new`` (candidate only) / ``removed`` (reference only);
- ``errored``: no usable attempt on at least one side, because attempts errored;
- ``unscored``: no pass/fail verdict on a side (no composite and no boolean judge);
- ``modified``: the case definition changed (both sides carry case hashes and they differ)
  or the set of judges scoring it changed;
- ``compared``: everything else — only these enter the tests.

Per compared case: Wilson 95% intervals of both pass rates, two-sided Fisher exact p.
``regressed`` (default rule) = the verdict got worse in the order passed > flaky > failed
(passed → flaky/failed, flaky → failed); ``regressed_significant`` = Holm-adjusted Fisher
p < alpha (Holm over the compared cases, ``fisher_p_adjusted``) with a lower candidate pass
rate. ``improved`` / ``improved_significant`` mirror them.
Overall: stratified permutation test of no change in pass rate, statistic = sum of per-case
standardised changes (``score``; see permutation.py), reported with the mean per-case change
in pass rate (``statistic``); exact when feasible, seeded Monte Carlo otherwise; seed =
SHA-256 of "reference_id|candidate_id"; then a within-case bootstrap CI of that mean change, and the paired t CI of the mean composite difference (plus a CR1
cluster-robust SE when a cluster tag is available).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.bootstrap import bootstrap_pass_rate_ci
from eval_harness.analysis.compare.fisher import fisher_exact_two_sided
from eval_harness.analysis.compare.paired import cluster_robust_mean, paired_t
from eval_harness.analysis.compare.permutation import (
    CaseCounts,
    seed_from_ids,
    stratified_permutation_test,
)
from eval_harness.analysis.compare.verdicts import VERDICT_RANK
from eval_harness.analysis.compare.wilson import wilson_interval
from eval_harness.analysis.stats.correction import adjust_pvalues


def num(x: Any) -> Any:
    """JSON-safe scalar: numpy → Python, NaN/inf → None."""
    if x is None:
        return None
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _side(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    n, k = int(row["n_usable"]), int(row["n_pass"])
    lo, hi = wilson_interval(k, n)
    return {
        "n_attempts": int(row["n_attempts"]),
        "n_errored": int(row["n_errored"]),
        "n": n,
        "passes": k,
        "pass_rate": num(row["pass_rate"]),
        "wilson_ci": [num(lo), num(hi)],
        "verdict": str(row["verdict"]),
        "composite_mean": num(row["composite_mean"]),
        "case_hash": str(row["case_hashes"]),
    }


def _status(ref: Mapping[str, Any] | None, cand: Mapping[str, Any] | None) -> tuple[str, str]:
    if ref is None:
        return "new", ""
    if cand is None:
        return "removed", ""
    if ref["verdict"] == "errored" or cand["verdict"] == "errored":
        sides = [
            s for s, r in (("reference", ref), ("candidate", cand)) if r["verdict"] == "errored"
        ]
        return "errored", "no usable attempt: " + " and ".join(sides)
    if ref["verdict"] == "unscored" or cand["verdict"] == "unscored":
        return "unscored", "no pass/fail verdict (composite unavailable, no boolean judge)"
    if ref["case_hashes"] and cand["case_hashes"] and ref["case_hashes"] != cand["case_hashes"]:
        return "modified", "case_hash changed"
    if ref["judges"] != cand["judges"]:
        return "modified", f"judges changed ({ref['judges']} -> {cand['judges']})"
    return "compared", ""


def compare_sides(
    ref_cases: pd.DataFrame,
    cand_cases: pd.DataFrame,
    *,
    reference: Mapping[str, Any],
    candidate: Mapping[str, Any],
    alpha: float = 0.05,
    clusters: Mapping[str, Any] | None = None,
    cluster_key: str | None = None,
    n_permutations: int = 20_000,
    n_bootstrap: int = 2_000,
) -> dict[str, Any]:
    """One comparison record (JSON-ready) of ``candidate`` against ``reference``.

    ``reference`` / ``candidate`` describe the sides ({"condition_id", "levels", "source"});
    their ``condition_id`` (plus source) seed the Monte Carlo and bootstrap draws.
    ``clusters`` maps case_id → cluster label (from the ``cluster_key`` case tag).
    """
    ref_rows: dict[str, dict[str, Any]] = {
        str(r["case_id"]): {str(k): v for k, v in r.items()} for r in ref_cases.to_dict("records")
    }
    cand_rows: dict[str, dict[str, Any]] = {
        str(r["case_id"]): {str(k): v for k, v in r.items()} for r in cand_cases.to_dict("records")
    }
    lists: dict[str, list[str]] = {
        k: []
        for k in (
            "regressed",
            "regressed_significant",
            "improved",
            "improved_significant",
            "modified",
            "new",
            "removed",
            "errored",
            "errored_candidate",
            "unscored",
        )
    }
    rows: list[dict[str, Any]] = []
    counts: list[CaseCounts] = []
    comp_diffs: list[float] = []
    comp_cases: list[str] = []
    for case in sorted(set(ref_rows) | set(cand_rows)):
        ref, cand = ref_rows.get(case), cand_rows.get(case)
        status, reason = _status(ref, cand)
        row: dict[str, Any] = {"case_id": case, "status": status, "reason": reason or None}
        row["reference"], row["candidate"] = _side(ref), _side(cand)
        if cand is not None and cand["verdict"] == "errored":
            lists["errored_candidate"].append(case)
        if status != "compared":
            lists[status].append(case)
            rows.append(row)
            continue
        if ref is None or cand is None:  # unreachable: _status returned new/removed
            continue
        n_a, k_a, n_b, k_b = (
            int(ref["n_usable"]),
            int(ref["n_pass"]),
            int(cand["n_usable"]),
            int(cand["n_pass"]),
        )
        diff = k_b / n_b - k_a / n_a
        p = fisher_exact_two_sided(k_a, n_a, k_b, n_b)
        rank_a, rank_b = VERDICT_RANK[ref["verdict"]], VERDICT_RANK[cand["verdict"]]
        flags = {"regressed": rank_b < rank_a, "improved": rank_b > rank_a}
        for name, hit in flags.items():
            if hit:
                lists[name].append(case)
        comp = float(cand["composite_mean"]) - float(ref["composite_mean"])
        row.update(
            {"pass_rate_diff": num(diff), "fisher_p": num(p), "composite_diff": num(comp), **flags}
        )
        rows.append(row)
        counts.append(CaseCounts(n_a, k_a, n_b, k_b))
        if math.isfinite(comp):
            comp_diffs.append(comp)
            comp_cases.append(case)
    _significant_flags(rows, lists, alpha)
    seed = seed_from_ids(_side_id(reference), _side_id(candidate))
    perm = stratified_permutation_test(counts, seed=seed, n_permutations=n_permutations)
    boot = bootstrap_pass_rate_ci(counts, seed=seed ^ 1, n_resamples=n_bootstrap)
    overall = {
        "statistic": num(perm.statistic),
        "statistic_name": "mean per-case change in pass rate (candidate - reference)",
        "score": num(perm.score),
        "score_name": "tested statistic: sum of per-case standardised changes, Z / sd0(Z)",
        "p": num(perm.p),
        "p_drop": num(perm.p_drop),
        "method": perm.method,
        "n_permutations": perm.n_permutations,
        "seed": perm.seed,
        "n_cases": perm.n_cases,
        "significant": perm.method != "none" and perm.p < alpha,
        "bootstrap_ci": None if boot is None else [num(boot.lo), num(boot.hi)],
        "bootstrap": None
        if boot is None
        else {
            "method": "within-case percentile",
            "level": boot.level,
            "n_resamples": boot.n_resamples,
            "seed": boot.seed,
        },
    }
    composite = _composite_block(comp_diffs, comp_cases, clusters, cluster_key)
    # Direction from the tested statistic (the mean change can disagree when weights differ).
    significant_drop = bool(overall["significant"]) and perm.score < 0
    return {
        "reference": dict(reference),
        "candidate": dict(candidate),
        "alpha": alpha,
        "n_cases_compared": len(counts),
        "cases": rows,
        "overall": overall,
        "composite": composite,
        **lists,
        "significant_drop": significant_drop,
        "verdict": _verdict(lists["regressed"], lists["improved"], perm, alpha, len(counts)),
        "verdict_significant_only": _verdict(
            lists["regressed_significant"], lists["improved_significant"], perm, alpha, len(counts)
        ),
    }


def _significant_flags(rows: list[dict[str, Any]], lists: dict[str, list[str]],
                       alpha: float) -> None:
    """``regressed_significant`` / ``improved_significant`` on Holm-adjusted Fisher p.

    The gate fails when *any* case is flagged, so the error rate to control is the
    family-wise one across cases: with raw p < alpha, 100 unchanged cases fail the gate
    about 41% of the time. Holm (R ``p.adjust(p, "holm")``) over the compared cases keeps
    it at or below alpha under no change, whatever the dependence between cases.
    """
    compared = [r for r in rows if r["status"] == "compared"]
    raw = np.array([r["fisher_p"] for r in compared], dtype=float)
    adj = adjust_pvalues(raw, "holm") if len(raw) else raw
    for row, p_adj in zip(compared, adj, strict=True):
        sig = bool(p_adj < alpha)
        row["fisher_p_adjusted"] = num(float(p_adj))
        row["regressed_significant"] = sig and row["pass_rate_diff"] < 0
        row["improved_significant"] = sig and row["pass_rate_diff"] > 0
        for name in ("regressed_significant", "improved_significant"):
            if row[name]:
                lists[name].append(row["case_id"])


def _side_id(side: Mapping[str, Any]) -> str:
    return f"{side.get('source', 'runs')}:{side.get('condition_id', '')}"


def _verdict(regressed: list[str], improved: list[str], perm: Any, alpha: float, n: int) -> str:
    """The headline: the overall test decides (``regressed`` / ``improved`` only when the
    stratified permutation test is significant); otherwise per-case movements are named
    (``mixed``, ``cases regressed``, ``cases improved``) or ``unchanged``. The CI gate does
    not read this: it counts regressed cases itself (see gate.py)."""
    if n == 0:
        return "no-comparable-cases"
    if perm.p < alpha and perm.score < 0:
        return "regressed"
    if perm.p < alpha and perm.score > 0:
        return "improved"
    if regressed and improved:
        return "mixed"
    if regressed:
        return "cases regressed"
    if improved:
        return "cases improved"
    return "unchanged"


def _composite_block(
    diffs: list[float],
    cases: list[str],
    clusters: Mapping[str, Any] | None,
    cluster_key: str | None,
) -> dict[str, Any]:
    t = paired_t(diffs)
    block: dict[str, Any] = {
        "statistic_name": "mean per-case composite difference (candidate - reference)",
        "estimate": num(t.estimate),
        "se": num(t.se),
        "df": num(t.df),
        "ci": [num(t.ci[0]), num(t.ci[1])],
        "p": num(t.p),
        "n_cases": t.n,
        "method": "paired t",
        "cluster": None,
    }
    if clusters and cluster_key:
        have = [(d, clusters[c]) for d, c in zip(diffs, cases, strict=True) if c in clusters]
        cr = cluster_robust_mean([d for d, _ in have], [g for _, g in have]) if have else None
        if cr is None:
            block["cluster"] = {
                "key": cluster_key,
                "method": "CR1",
                "note": "fewer than 2 clusters among compared cases",
            }
        else:
            block["cluster"] = {
                "key": cluster_key,
                "method": "CR1",
                "n_clusters": cr.n_clusters,
                "n_cases": cr.n,
                "se": num(cr.se),
                "df": num(cr.df),
                "ci": [num(cr.ci[0]), num(cr.ci[1])],
                "p": num(cr.p),
            }
    return block
