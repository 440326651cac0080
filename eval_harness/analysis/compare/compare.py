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
    CaseArrays,
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


_SIDE_COLS = ("n_attempts", "n_errored", "n_usable", "n_pass", "pass_rate", "verdict",
              "composite_mean", "case_hashes", "judges")


def _floats(values: np.ndarray) -> list[Any]:
    """JSON-safe list of floats: NaN / inf → None (``num`` over an array)."""
    arr = np.asarray(values, dtype=float)
    out: list[Any] = arr.tolist()
    for i in np.flatnonzero(~np.isfinite(arr)).tolist():
        out[i] = None
    return out


class _Side:
    """One side's per-case columns aligned on the compared case ids (``pos`` < 0: absent)."""

    def __init__(self, cases: pd.DataFrame, ids: list[str]) -> None:
        own = [str(c) for c in cases["case_id"].tolist()]
        last = {c: i for i, c in enumerate(own)}  # a repeated case id: the last row wins
        self.pos = np.array([last.get(c, -1) for c in ids], dtype=np.int64)
        self.has = self.pos >= 0
        at = np.where(self.has, self.pos, 0)
        cols = {c: cases[c].to_numpy()[at] if len(cases) else np.zeros(len(ids), dtype=object)
                for c in _SIDE_COLS}
        self.n = np.where(self.has, cols["n_usable"], 0).astype(np.int64)
        self.k = np.where(self.has, cols["n_pass"], 0).astype(np.int64)
        self.verdict = [str(v) if h else "" for v, h in zip(cols["verdict"], self.has.tolist(),
                                                             strict=True)]
        self.hashes = cols["case_hashes"].tolist()
        self.judges = cols["judges"].tolist()
        self.composite = np.where(self.has, cols["composite_mean"], np.nan).astype(float)
        self.cols = cols

    def dicts(self) -> list[dict[str, Any] | None]:
        """The per-case side blocks of the rows (None where the side lacks the case)."""
        has = self.has.tolist()
        lo, hi = wilson_intervals(self.k, self.n)
        c = self.cols
        attempts = np.where(self.has, c["n_attempts"], 0).astype(np.int64).tolist()
        errored = np.where(self.has, c["n_errored"], 0).astype(np.int64).tolist()
        rate = _floats(np.where(self.has, c["pass_rate"], np.nan))
        comp = _floats(self.composite)
        return [
            {"n_attempts": attempts[i], "n_errored": errored[i], "n": n, "passes": k,
             "pass_rate": rate[i], "wilson_ci": [lo_i, hi_i], "verdict": self.verdict[i],
             "composite_mean": comp[i], "case_hash": str(self.hashes[i])} if has[i] else None
            for i, (n, k, lo_i, hi_i) in enumerate(zip(self.n.tolist(), self.k.tolist(),
                                                       _floats(lo), _floats(hi), strict=True))
        ]


def wilson_intervals(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``wilson_interval`` of each (k, n) pair, computed once per distinct pair (the
    same floats as the scalar function; NaN where n = 0)."""
    if not len(n):
        return np.empty(0), np.empty(0)
    pairs, inverse = np.unique(np.stack([k, n], axis=1), axis=0, return_inverse=True)
    table = np.array([wilson_interval(int(a), int(b)) for a, b in pairs], dtype=float)
    inverse = inverse.reshape(-1)
    return table[inverse, 0], table[inverse, 1]


def fisher_p_values(k_a: np.ndarray, n_a: np.ndarray, k_b: np.ndarray,
                    n_b: np.ndarray) -> np.ndarray:
    """``fisher_exact_two_sided`` of each case, computed once per distinct table."""
    if not len(n_a):
        return np.empty(0)
    tables, inverse = np.unique(np.stack([k_a, n_a, k_b, n_b], axis=1), axis=0,
                                return_inverse=True)
    p = np.array([fisher_exact_two_sided(*(int(x) for x in t)) for t in tables], dtype=float)
    return p[inverse.reshape(-1)]


def _statuses(ref: _Side, cand: _Side) -> tuple[list[str], list[str]]:
    """Each case's status and reason (module docstring order)."""
    statuses, reasons = [], []
    for i in range(len(ref.has)):
        v_r, v_c = ref.verdict[i], cand.verdict[i]
        if not ref.has[i]:
            status, reason = "new", ""
        elif not cand.has[i]:
            status, reason = "removed", ""
        elif v_r == "errored" or v_c == "errored":
            sides = [s for s, v in (("reference", v_r), ("candidate", v_c)) if v == "errored"]
            status, reason = "errored", "no usable attempt: " + " and ".join(sides)
        elif v_r == "unscored" or v_c == "unscored":
            status = "unscored"
            reason = "no pass/fail verdict (composite unavailable, no boolean judge)"
        elif ref.hashes[i] and cand.hashes[i] and ref.hashes[i] != cand.hashes[i]:
            status, reason = "modified", "case_hash changed"
        elif ref.judges[i] != cand.judges[i]:
            status = "modified"
            reason = f"judges changed ({ref.judges[i]} -> {cand.judges[i]})"
        else:
            status, reason = "compared", ""
        statuses.append(status)
        reasons.append(reason)
    return statuses, reasons


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
    Vectorised over cases: per-case values are column operations; Wilson intervals and
    Fisher p are computed once per distinct count table.
    """
    ids = sorted({str(c) for c in ref_cases["case_id"].tolist()}
                 | {str(c) for c in cand_cases["case_id"].tolist()})
    ref, cand = _Side(ref_cases, ids), _Side(cand_cases, ids)
    statuses, reasons = _statuses(ref, cand)
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
    lists["errored_candidate"] = [c for c, v in zip(ids, cand.verdict, strict=True)
                                  if v == "errored"]
    for case, status in zip(ids, statuses, strict=True):
        if status != "compared":
            lists[status].append(case)
    ref_sides, cand_sides = ref.dicts(), cand.dicts()
    rows: list[dict[str, Any]] = [
        {"case_id": case, "status": status, "reason": reason or None,
         "reference": r_side, "candidate": c_side}
        for case, status, reason, r_side, c_side in zip(
            ids, statuses, reasons, ref_sides, cand_sides, strict=True)
    ]
    sel = np.array([s == "compared" for s in statuses], dtype=bool)
    counts = CaseArrays(ref.n[sel], ref.k[sel], cand.n[sel], cand.k[sel])
    diff = counts.k_b / counts.n_b - counts.k_a / counts.n_a if len(counts) else np.empty(0)
    fisher = fisher_p_values(counts.k_a, counts.n_a, counts.k_b, counts.n_b)
    comp = cand.composite[sel] - ref.composite[sel]
    compared_rows = [row for row, s in zip(rows, sel.tolist(), strict=True) if s]
    comp_list = _floats(comp)
    for row, d, p, c in zip(compared_rows, diff.tolist(), fisher.tolist(), comp_list,
                            strict=True):
        rank_a = VERDICT_RANK[row["reference"]["verdict"]]
        rank_b = VERDICT_RANK[row["candidate"]["verdict"]]
        flags = {"regressed": rank_b < rank_a, "improved": rank_b > rank_a}
        for name, hit in flags.items():
            if hit:
                lists[name].append(row["case_id"])
        row.update({"pass_rate_diff": d, "fisher_p": p, "composite_diff": c, **flags})
    finite = np.isfinite(comp)
    comp_diffs = comp[finite].tolist()
    comp_cases = [r["case_id"] for r, f in zip(compared_rows, finite.tolist(), strict=True) if f]
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
