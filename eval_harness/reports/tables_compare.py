"""Report tables that compare conditions: regression comparisons, leaderboard, pairwise
judges; plus the headline findings of the comparisons (Markdown and HTML share them).

Verdicts (``analysis.compare.compare``): ``regressed`` / ``improved`` only when the
stratified pass-rate permutation test is significant; otherwise ``mixed``,
``cases regressed``, ``cases improved`` or ``unchanged`` name per-case movements;
``no-comparable-cases`` when nothing could be compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eval_harness.reports import fmt
from eval_harness.reports.table_model import Labels, TextTable


def _cases(xs: list[str], limit: int = 70) -> str:
    return fmt.one_line(", ".join(xs), limit) if xs else "none"


def comparisons_table(report: Mapping[str, Any]) -> TextTable:
    """Each comparison: verdict, pass-rate change (bootstrap CI, permutation p) and the
    counts of regressed / improved cases (case ids in the notes)."""
    lab = Labels(report)
    recs = report.get("comparisons") or []
    # a baseline row compares a condition with ITSELF in the committed baseline: its "vs"
    # says baseline, never the condition's own label (which reads like a self-comparison)
    refs = {"baseline" if r.get("kind") == "baseline" else
            str(r.get("reference_id") or r.get("reference")) for r in recs}
    one_ref = len(refs) == 1
    cols = ["candidate", "vs", "verdict", "Δ pass rate [95% CI over cases]", "p", "regr.", "impr.",
            "n", "other"]
    t = TextTable("comparisons", "Regression comparisons", cols,
                  align=["l", "l", "l", "r", "r", "r", "r", "r", "l"],
                  priority=[0, 0, 0, 1, 2, 0, 1, 3, 4])
    if one_ref and recs:
        r0 = recs[0]
        ref_short, _ = lab.of(r0.get("reference_id"), r0.get("reference_levels"), r0.get("reference"))
        named = f" {r0['baseline_file']}" if r0.get("baseline_file") else ""
        t.title = (f"Regression comparisons (each condition against the baseline{named})"
                   if r0.get("kind") == "baseline" else f"Regression comparisons (against {ref_short})")
        del t.columns[1], t.align[1], t.priority[1]
    for r in recs:
        cand, cand_full = lab.of(r.get("candidate_id"), r.get("candidate_levels"), r.get("candidate"))
        ref, ref_full = lab.of(r.get("reference_id"), r.get("reference_levels"), r.get("reference"))
        if r.get("kind") == "baseline":  # same condition id: just "baseline"
            same = r.get("reference_id") == r.get("candidate_id")
            ref = "baseline" if same else f"baseline {ref}"
            ref_full = str(r.get("reference") or ref_full)
        other = [f"{k} {len(r[k])}" for k in ("modified", "new", "removed", "errored") if r.get(k)]
        row = [cand, ref, str(r.get("verdict")),
               fmt.est_ci(r.get("pass_rate_change"), r.get("pass_rate_ci"), sign=True),
               fmt.pval(r.get("p")), str(len(r.get("regressed") or [])),
               str(len(r.get("improved") or [])), str(r.get("n_cases_compared")),
               ", ".join(other) or "none"]
        tips = {0: cand_full, 1: ref_full}
        if one_ref:
            del row[1]
            tips = {0: cand_full}
        t.add(row, tips)
        if r.get("regressed"):
            t.notes.append(f"regr. {cand}: {_cases(list(r['regressed']))}")
    if t.rows and all(row[-1] == "none" for row in t.rows):
        # Nothing modified / new / removed / errored: the column would only say "none".
        del t.priority[-1]
        for lst in (t.columns, t.align, *t.rows, *t.tips):
            del lst[-1]
    files = sorted({str(r["baseline_file"]) for r in recs if r.get("baseline_file")})
    if files and not one_ref:
        t.notes.insert(0, f"baseline = {', '.join(files)} (the same condition in it)")
    if recs:
        t.notes.insert(0, "verdict regressed / improved: significant pass-rate permutation "
                          "test; else per-case: mixed, cases regressed / improved, unchanged; "
                          "regr. / impr.: cases whose pass rate fell / rose; Δ pass rate CI: "
                          "two-level bootstrap over cases (cases, then attempts within a "
                          "case); p: case-stratified paired permutation test")
    return t


def leaderboard_table(report: Mapping[str, Any]) -> TextTable:
    """Rank, condition, mean (95% CI), pass rate, cost, latency, Δ to the leader, tie flag."""
    lb = report.get("leaderboard")
    lab = Labels(report)
    metric = str((lb or {}).get("quality_metric") or "composite")
    head = "mean [95% CI]" if metric == "composite" else f"{metric} [95% CI]"
    t = TextTable("leaderboard", "Leaderboard",
                  ["rank", "condition", head, "pass", "cost/run", "latency",
                   "Δ vs leader", "p adj", "≈ best"],
                  align=["r", "l", "r", "r", "r", "r", "r", "r", "l"],
                  priority=[0, 0, 0, 2, 4, 5, 1, 3, 0])
    if not lb:
        return t
    t.title = f"Leaderboard ({lb.get('n_cases')} cases answered by every condition)"
    for r in lb.get("rows") or []:
        lead = r.get("vs_leader") is None
        short, full = lab.of(r.get("condition_id"), r.get("levels"), r.get("label"))
        t.add([str(r.get("rank")), short, fmt.est_ci(r.get("mean"), r.get("ci")),
               fmt.pct(r.get("pass_rate")), fmt.money(r.get("cost_usd")),
               fmt.seconds(r.get("latency_s")),
               "leader" if lead else fmt.est_pm(r.get("vs_leader"), r.get("vs_leader_ci")),
               "" if lead else fmt.pval(r.get("vs_leader_p_adjusted")),
               fmt.yes_no(r.get("indistinguishable_from_best"))], {1: full})
    if len(t.rows) > 1:
        t.notes.append("Δ vs leader ± 95% CI: paired t over cases, p Holm-adjusted; "
                       "≈ best: not distinguishable from the leader")
    t.notes.append(saturation_line(lb.get("saturation")))
    return t


def saturation_line(sat: Mapping[str, Any] | None) -> str:
    """``saturation: 2 of 8 cases solved by every condition (c02, c03), 0 failed by every one``."""
    if not sat:
        return "saturation: not available"
    solved, failed = list(sat.get("solved_by_all") or []), list(sat.get("failed_by_all") or [])

    def names(xs: list[str]) -> str:
        return f" ({fmt.one_line(', '.join(xs), 60)})" if xs else ""

    return (f"saturation: {len(solved)} of {sat.get('n_cases')} cases solved by every condition"
            f"{names(solved)}, {len(failed)} failed by every condition{names(failed)}"
            " — they cannot separate conditions")


def pairwise_table(report: Mapping[str, Any]) -> TextTable:
    """Pairwise judges (``pairwise.json``): per pair of conditions, wins / ties / losses of
    ``a`` against ``b``, order-inconsistent verdicts, win rate and the sign-test p."""
    lab = Labels(report)
    t = TextTable("pairwise", "Pairwise judges (a against b)",
                  ["judge", "a", "b", "n", "wins", "ties", "losses", "incons.",
                   "win rate", "sign p"],
                  align=["l", "l", "l", "r", "r", "r", "r", "r", "r", "r"],
                  priority=[0, 0, 0, 2, 1, 1, 1, 3, 0, 0])
    pw = report.get("pairwise")
    if pw is None:
        return t
    t.empty = "no pairwise results"
    for judge, block in (pw.get("judges") or {}).items():
        for pair in (block or {}).get("pairs") or []:
            sm = pair.get("summary") or {}
            a, a_full = lab.of(pair.get("a"), pair.get("levels_a"))
            b, b_full = lab.of(pair.get("b"), pair.get("levels_b"))
            t.add([str(judge), a, b,
                   *(str(sm.get(k, fmt.DASH)) for k in ("n", "wins", "ties", "losses",
                                                        "inconsistent")),
                   fmt.pct(sm.get("win_rate")), fmt.pval(sm.get("sign_test_p"))],
                  {1: a_full, 2: b_full})
    if t.rows:
        t.notes.append("win rate = (wins + ties/2) / decided; incons. = the verdict "
                       "changed with the order of presentation (position bias)")
    return t


def comparison_findings(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Headline lines about the comparisons as (severity, plain text), severity one of
    ``regressed`` (significant overall drop), ``cases`` (per-case regressions without a
    significant drop: ``mixed`` / ``cases regressed``) — improvements are left to the table."""
    lab = Labels(report)
    out: list[tuple[str, str]] = []
    for r in report.get("comparisons") or []:
        verdict = r.get("verdict")
        cand, _ = lab.of(r.get("candidate_id"), r.get("candidate_levels"), r.get("candidate"))
        ref, _ = lab.of(r.get("reference_id"), r.get("reference_levels"), r.get("reference"))
        if r.get("kind") == "baseline":  # name the baseline, not only its condition
            ref = f"baseline {r.get('baseline_file') or 'file'} ({ref})"
        cases = list(r.get("regressed") or [])
        change = (f"Δ pass rate {fmt.est_ci(r.get('pass_rate_change'), r.get('pass_rate_ci'), sign=True)}"
                  f", p {fmt.pval(r.get('p'))}")
        if verdict == "regressed":
            out.append(("regressed", f"regressed: {cand} vs {ref} ({change}); "
                                     f"{len(cases)} case(s) regressed: {_cases(cases, 60)}"))
        elif verdict in ("mixed", "cases regressed") and cases:
            out.append(("cases", f"{verdict}: {cand} vs {ref} ({change}, not significant); "
                                 f"{len(cases)} case(s) regressed: {_cases(cases, 60)}"))
    return out
