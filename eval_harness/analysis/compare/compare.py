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
SHA-256 of "reference_id|candidate_id"; then a two-level bootstrap CI over cases (cases,
then attempts within a case; bootstrap.py) of that mean change, and the paired t CI over
cases of the mean composite difference (plus a CR1 cluster-robust SE when a cluster tag is
available). ``significant_drop`` here is the one-sided p_drop < alpha of this comparison
alone; ``build_comparisons`` replaces it by the Holm-adjusted p_drop over the comparisons
of the same kind (``overall.p_drop_adjusted``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.bootstrap import METHOD as BOOTSTRAP_METHOD
from eval_harness.analysis.compare.bootstrap import bootstrap_pass_rate_ci
from eval_harness.analysis.compare.paired import cluster_robust_mean, paired_t
from eval_harness.analysis.compare.permutation import (
    CaseArrays,
    seed_from_ids,
    stratified_permutation_test,
)
from eval_harness.analysis.compare.rows import CaseRows
from eval_harness.analysis.compare.sides import (
    SideTable,
    fisher_p_values,
    floats_or_none,
    statuses,
)
from eval_harness.analysis.compare.verdicts import VERDICT_RANK
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


def compare_sides(
    ref_cases: pd.DataFrame | SideTable,
    cand_cases: pd.DataFrame | SideTable,
    *,
    reference: Mapping[str, Any],
    candidate: Mapping[str, Any],
    alpha: float = 0.05,
    clusters: Mapping[str, Any] | None = None,
    cluster_key: str | None = None,
    n_permutations: int = 20_000,
    n_bootstrap: int = 2_000,
    row_columns: bool = False,
) -> dict[str, Any]:
    """One comparison record (JSON-ready) of ``candidate`` against ``reference``.

    ``row_columns``: ``cases`` is a ``rows.CaseRows`` (the same rows, kept as columns and
    built on access: what the CLI uses at scale) instead of a list of dicts.

    ``reference`` / ``candidate`` describe the sides ({"condition_id", "levels", "source"});
    their ``condition_id`` (plus source) seed the Monte Carlo and bootstrap draws.
    ``clusters`` maps case_id → cluster label (from the ``cluster_key`` case tag).
    The sides are ``case_verdicts`` rows of one condition each, or their ``SideTable``
    (built once per condition by ``build_comparisons``). Vectorised over cases: statuses,
    counts and flags are column operations; Wilson intervals and Fisher p are computed
    once per distinct count table.
    """
    ref = ref_cases if isinstance(ref_cases, SideTable) else SideTable(ref_cases)
    cand = cand_cases if isinstance(cand_cases, SideTable) else SideTable(cand_cases)
    ids = sorted(set(ref.index) | set(cand.index))
    pos_r, pos_c = ref.positions(ids), cand.positions(ids)
    status, reasons = statuses(ref, cand, pos_r, pos_c)
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
    lists["errored_candidate"] = [ids[i] for i in
                                  np.flatnonzero(cand.verdict[pos_c] == "errored").tolist()]
    sel = status == "compared"
    for i in np.flatnonzero(~sel).tolist():
        lists[status[i]].append(ids[i])
    p_r, p_c = pos_r[sel], pos_c[sel]
    counts = CaseArrays(ref.n[p_r], ref.k[p_r], cand.n[p_c], cand.k[p_c])
    diff = counts.k_b / counts.n_b - counts.k_a / counts.n_a if len(counts) else np.empty(0)
    fisher = fisher_p_values(counts.k_a, counts.n_a, counts.k_b, counts.n_b)
    comp = cand.composite[p_c] - ref.composite[p_r]
    rank = np.vectorize(VERDICT_RANK.get, otypes=[np.int64])
    rank_a = rank(ref.verdict[p_r]) if len(p_r) else np.empty(0, dtype=np.int64)
    rank_b = rank(cand.verdict[p_c]) if len(p_c) else np.empty(0, dtype=np.int64)
    regressed, improved = rank_b < rank_a, rank_b > rank_a
    case_ids = np.array(ids, dtype=object)[sel] if ids else np.empty(0, dtype=object)
    lists["regressed"] = case_ids[regressed].tolist()
    lists["improved"] = case_ids[improved].tolist()
    finite = np.isfinite(comp)
    comp_diffs = comp[finite].tolist()
    comp_cases = case_ids[finite].tolist()
    adjusted, worse_sig, better_sig = _significant_flags(fisher, diff, alpha)
    lists["regressed_significant"] = case_ids[worse_sig].tolist()
    lists["improved_significant"] = case_ids[better_sig].tolist()
    slot = np.full(len(ids), -1, dtype=np.int64)
    slot[sel] = np.arange(int(sel.sum()))
    rows = CaseRows(ids, status.tolist(), reasons, ref, pos_r, cand, pos_c, slot, (
        floats_or_none(diff), floats_or_none(fisher), floats_or_none(comp),
        regressed.tolist(), improved.tolist(), floats_or_none(adjusted),
        worse_sig.tolist(), better_sig.tolist()))
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
            "method": BOOTSTRAP_METHOD,
            "over": "cases",
            "level": boot.level,
            "n_resamples": boot.n_resamples,
            "seed": boot.seed,
        },
    }
    composite = _composite_block(comp_diffs, comp_cases, clusters, cluster_key)
    # One-sided: the gate's question is "worse?"; p_drop is exact conditional on margins.
    significant_drop = perm.method != "none" and perm.p_drop < alpha
    return {
        "reference": dict(reference),
        "candidate": dict(candidate),
        "alpha": alpha,
        "n_cases_compared": len(counts),
        "cases": rows if row_columns else list(rows),
        "overall": overall,
        "composite": composite,
        **lists,
        "significant_drop": significant_drop,
        "verdict": _verdict(lists["regressed"], lists["improved"], perm, alpha, len(counts)),
        "verdict_significant_only": _verdict(
            lists["regressed_significant"], lists["improved_significant"], perm, alpha, len(counts)
        ),
    }


def _significant_flags(fisher: np.ndarray, diff: np.ndarray,
                       alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Holm-adjusted Fisher p, ``regressed_significant``, ``improved_significant``) of
    the compared cases.

    The gate fails when *any* case is flagged, so the error rate to control is the
    family-wise one across cases: with raw p < alpha, 100 unchanged cases fail the gate
    about 41% of the time. Holm (R ``p.adjust(p, "holm")``) over the compared cases keeps
    it at or below alpha under no change, whatever the dependence between cases.
    """
    raw = np.asarray(fisher, dtype=float)
    adj = adjust_pvalues(raw, "holm") if len(raw) else raw
    sig = np.asarray(adj < alpha, dtype=bool)
    return adj, sig & (diff < 0), sig & (diff > 0)


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
