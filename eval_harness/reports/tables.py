"""Report tables as plain strings: one definition shared by the console, Markdown and HTML.

Each function turns a part of the report model (``model.build_report``) into a
:class:`TextTable` of unescaped cell strings; each renderer escapes for its own medium.
A missing optional block gives a table with no rows and an ``empty`` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eval_harness.reports import fmt
from eval_harness.reports.fmt import cell_text
from eval_harness.reports.table_model import Labels, TextTable, short_id
from eval_harness.reports.tables_compare import (
    comparisons_table,
    leaderboard_table,
    pairwise_table,
    saturation_line,
)

__all__ = ["Labels", "TextTable", "all_tables", "comparisons_table", "leaderboard_table",
           "pairwise_table", "saturation_line"]


def _prefix_note(report: Mapping[str, Any]) -> str | None:
    cut = [(f, k[: len(k) - len(v)]) for f, m in (report.get("level_display") or {}).items()
           for k, v in m.items() if k != v]
    seen = dict.fromkeys(cut)
    if not seen:
        return None
    return "levels shown without their common prefix: " + ", ".join(
        f"{f} {p!r}" for f, p in seen)


def _pass_ci(pair: Any) -> str:
    if not pair or len(pair) != 2 or not all(fmt.is_num(v) for v in pair):
        return fmt.DASH
    return f"{100 * pair[0]:.0f}–{100 * pair[1]:.0f}%"


def _pass_k_max(report: Mapping[str, Any]) -> int:
    """The largest k of the conditions' pass@k (0 when none: fewer than 2 replications)."""
    ks = [max(c["pass_k"]["k"]) for c in report.get("conditions") or []
          if isinstance(c.get("pass_k"), Mapping) and c["pass_k"].get("k")]
    return max(ks, default=0)


def _pass_k_cells(c: Mapping[str, Any], k: int) -> list[str]:
    pk = c.get("pass_k")
    if not isinstance(pk, Mapping) or k not in (pk.get("k") or []):
        return [fmt.DASH, fmt.DASH]
    i = pk["k"].index(k)
    return [fmt.pct(pk["pass_at_k"][i]), fmt.pct(pk["pass_hat_k"][i])]


def matrix_table(report: Mapping[str, Any]) -> TextTable:
    """#, condition (compact levels), mean composite [95% CI], pass rate (Wilson), cases
    passed / flaky, p95 latency, cost, and against the reference: Δ mean ± 95% CI, p, verdict."""
    lab = Labels(report)
    k = _pass_k_max(report)
    extra = [f"pass@{k}", f"pass^{k}"] if k else []
    t = TextTable(
        "matrix",
        "Conditions",
        ["#", "condition", "mean [95% CI]", "pass", "Wilson 95%", *extra, "passed", "flaky",
         "p95 lat.", "cost/run", "Δ vs ref", "p", "verdict"],
        align=["r", "l", "r", "r", "r", *["r"] * len(extra), "r", "r", "r", "r", "r", "r", "l"],
        priority=[0, 0, 0, 2, 6, *[5] * len(extra), 4, 5, 8, 7, 1, 3, 0],
    )
    for c in report.get("conditions") or []:
        cid = str(c["condition_id"])
        vs = c.get("vs_reference") or {}
        if c.get("is_reference"):
            delta, p, verdict = "reference", "", ""
        elif vs:
            delta = fmt.est_pm(vs.get("diff"), vs.get("ci"))
            p, verdict = fmt.pval(vs.get("p")), str(vs.get("verdict") or fmt.DASH)
        else:
            delta, p, verdict = fmt.DASH, fmt.DASH, fmt.DASH
        short, full = lab.of(cid)
        t.add(
            [
                str(lab.number[cid]),
                short,
                fmt.est_ci(c.get("mean"), c.get("ci")),
                fmt.pct(c.get("pass_rate")),
                _pass_ci(c.get("pass_ci")),
                *(_pass_k_cells(c, k) if k else []),
                f"{c.get('cases_passed', 0)}/{c.get('n_cases', 0)}",
                str(c.get("cases_flaky", 0)),
                fmt.seconds(c.get("latency_p95_s")),
                fmt.money(c.get("cost_mean_usd")),
                delta,
                p,
                verdict,
            ],
            {1: full},
        )
    if k:
        t.notes.append(f"pass@{k} / pass^{k}: chance that at least one / all of {k} attempts "
                       "pass (unbiased estimators over the replications, mean over cases; "
                       "every k in report.json)")
    if report.get("reference"):
        t.notes.append("Δ vs ref ± 95% CI, p: paired t on per-case mean composite; "
                       "verdict: see Regression comparisons")
    else:
        t.notes.append("comparison with a reference: not available")
    errored = sum(int(c.get("n_errored_attempts") or 0) for c in report.get("conditions") or [])
    if errored:
        t.notes.append(f"{errored} errored attempt(s) excluded (never scored 0).")
    note = _prefix_note(report)
    if note:
        t.notes.append(note)
    return t


def anova_table(report: Mapping[str, Any]) -> TextTable:
    """Term, F, df, p raw / adjusted, partial η², significant."""
    a = report.get("anova") or {}
    corr = report.get("correction") or "?"
    t = TextTable(
        "anova",
        f"ANOVA ({_method(report)}; correction {corr})",
        ["term", "F", "df", "p raw", "p adj", "partial η²", "gen. η²", "sig."],
        align=["l", "r", "r", "r", "r", "r", "r", "l"],
        priority=[0, 1, 2, 3, 0, 1, 1, 0],
    )
    errors = set()
    for r in a.get("terms") or []:
        t.add([r["term"], fmt.f3(r.get("F"), 2), fmt.df_text(r.get("df_num"), r.get("df_den")),
               fmt.pval(r.get("p_raw")), fmt.pval(r.get("p_adjusted")),
               fmt.f3(r.get("partial_eta_sq")), fmt.f3(r.get("ges")),
               fmt.yes_no(r.get("significant"))])
        if r.get("partial_eta_sq_error"):
            errors.add(str(r["partial_eta_sq_error"]))
    if errors:
        t.notes.append(f"partial η² error term: {'; '.join(sorted(errors))}; gen. η²: "
                       "generalized eta squared (afex ges) on the complete cases, comparable "
                       "across methods")
    for e in a.get("excluded_terms") or []:
        t.notes.append(f"excluded term {e.get('term')}: {e.get('reason')}")
    n_exc = len(a.get("excluded_cases") or [])
    if n_exc:
        t.notes.append(f"{n_exc} case(s) excluded from the ANOVA (incomplete); see report.json")
    vc = report.get("variance_components")
    if vc:
        t.notes.append("variance components: " + "; ".join(f"{k} {v}" for k, v in fmt.scalar_items(vc)))
    line = power_line(report.get("power"))
    if line:
        t.notes.append(line)
    return t


def power_line(power: Any) -> str | None:
    """``power: MDE 0.235 for a pairwise contrast at 80% power, α 0.05, 8 cases × 3 reps``."""
    if not isinstance(power, Mapping) or not power:
        return None
    if power.get("text"):
        return f"power: {power['text']}"
    if fmt.is_num(power.get("mde")):
        line = (f"power: minimum detectable pairwise difference {fmt.f3(power['mde'])}"
                f" (t-based {fmt.f3(power.get('mde_t'))}) at {fmt.pct(power.get('target_power'))}"
                f" power, α {power.get('alpha')}, {power.get('n_cases')} cases × "
                f"{power.get('replications')} replications")
        return line + (f"; {power['note']}" if power.get("note") else "")
    return "power: " + "; ".join(f"{k} {v}" for k, v in fmt.scalar_items(power))


def _method(report: Mapping[str, Any]) -> str:
    m = report.get("method")
    if isinstance(m, Mapping):
        name = m.get("name", "?")
        return f"{name}, {m['sphericity']}" if m.get("sphericity") else str(name)
    return str(m or "?")


def contrasts_table(report: Mapping[str, Any]) -> TextTable:
    """Pairwise marginal-mean differences per factor (a − b), corrected within each factor."""
    lab = Labels(report)
    t = TextTable("contrasts", "Contrasts (a − b, corrected within each factor)",
                  ["factor", "a", "b", "a − b ± 95% CI", "p raw", "p adj", "sig."],
                  align=["l", "l", "l", "r", "r", "r", "l"], priority=[0, 0, 0, 0, 2, 0, 1])
    for r in report.get("contrasts") or []:
        f = str(r["factor"])
        t.add([f, lab.level(f, r.get("a")), lab.level(f, r.get("b")),
               fmt.est_pm(r.get("estimate"), r.get("ci")),
               fmt.pval(r.get("p_raw")), fmt.pval(r.get("p_adjusted")),
               fmt.yes_no(r.get("significant"))],
              {1: str(r.get("a")), 2: str(r.get("b"))})
    return t


def simple_effects_table(report: Mapping[str, Any]) -> TextTable:
    """``--simple-effects``: contrasts of a factor within each level of another (a − b),
    one correction family per (factor, by, level)."""
    lab = Labels(report)
    t = TextTable("simple_effects", "Simple effects (a − b within each level of another factor)",
                  ["factor", "within", "a", "b", "a − b ± 95% CI", "p raw", "p adj", "sig."],
                  align=["l", "l", "l", "l", "r", "r", "r", "l"],
                  priority=[0, 0, 0, 0, 0, 2, 0, 1])
    for r in report.get("simple_effects") or []:
        f, by = str(r["factor"]), str(r["by"])
        t.add([f, f"{by}={lab.level(by, r.get('at'))}", lab.level(f, r.get("a")),
               lab.level(f, r.get("b")), fmt.est_pm(r.get("estimate"), r.get("ci")),
               fmt.pval(r.get("p_raw")), fmt.pval(r.get("p_adjusted")),
               fmt.yes_no(r.get("significant"))],
              {1: f"{by}={r.get('at')}", 2: str(r.get("a")), 3: str(r.get("b"))})
    if t.rows:
        t.notes.append("p adj: corrected within each (factor, within-level) family")
    return t


def per_judge_table(report: Mapping[str, Any]) -> TextTable:
    """Significant (judge, term) pairs after one BH family over all of them."""
    pj = report.get("per_judge")
    t = TextTable("per_judge", "Per-judge hits", ["judge", "term", "F", "p raw", "p adj",
                                                  "partial η²"],
                  align=["l", "l", "r", "r", "r", "r"], priority=[0, 0, 1, 2, 0, 1])
    if not pj:
        t.empty = "not run (add --per-judge to screen each judge's scores with its own ANOVA)"
        return t
    t.title = f"Per-judge hits ({pj.get('correction') or 'bh'} over {pj.get('family_size')} tests)"
    t.empty = "no judge-level effect after correction"
    for r in pj.get("hits") or []:
        t.add([str(r["judge"]), str(r["term"]), fmt.f3(r.get("F"), 2),
               fmt.pval(r.get("p_raw")), fmt.pval(r.get("p_adjusted")),
               fmt.f3(r.get("partial_eta_sq"))])
    for e in pj.get("excluded") or []:
        t.notes.append(f"judge {e.get('judge')} excluded: {e.get('reason')}")
    return t


def judge_means_table(report: Mapping[str, Any]) -> TextTable:
    """Mean normalized score of each judge per condition (descriptive)."""
    jm = report.get("judge_means")
    judges = list((jm or {}).get("judges") or [])
    lab = Labels(report)
    t = TextTable("judge_means", "Judge means by condition (normalized, mean over cases)",
                  ["#", "condition", *judges], align=["r", "l"] + ["r"] * len(judges),
                  priority=[0, 0, *(1 + i // 4 for i in range(len(judges)))])
    t.empty = "fewer than two judges"
    for r in (jm or {}).get("rows") or []:
        cid = str(r["condition_id"])
        short, full = lab.of(cid)
        t.add([str(lab.number.get(cid, "")), short,
               *(fmt.f3(r["means"].get(j), 2) for j in judges)], {1: full})
    return t


def thresholds_table(report: Mapping[str, Any]) -> TextTable:
    """Threshold gates per condition: target, metric, value, threshold, passed."""
    lab = Labels(report)
    t = TextTable("thresholds", "Thresholds", ["condition", "target", "metric", "value",
                                               "threshold", "passed"],
                  align=["l", "l", "l", "r", "r", "l"])
    rows = report.get("thresholds")
    if rows is None:
        return t
    t.empty = "no thresholds configured"
    for r in rows:
        short, full = lab.of(r.get("condition_id"), r.get("levels"))
        t.add([short, str(r.get("target", "")), str(r.get("metric", "")),
               fmt.f3(r.get("value")), fmt.f3(r.get("threshold")),
               "PASS" if r.get("passed") else "FAIL"], {0: full})
    failed = sum(1 for r in rows if not r.get("passed"))
    if rows:
        t.notes.append(f"{failed} of {len(rows)} threshold check(s) failed" if failed
                       else f"all {len(rows)} threshold check(s) passed")
    return t


def grid_table(report: Mapping[str, Any], *, show_all: bool = False, limit: int = 60) -> TextTable:
    """Case × condition cells ``passes/attempts`` (``~`` flaky, ``!`` errored attempts,
    ``E`` errored); by default only cases whose verdict differs between conditions.
    Columns are the condition numbers (``#``) of the Conditions table."""
    lab = Labels(report)
    grid = report.get("case_grid") or {}
    cids = [str(c) for c in grid.get("condition_ids") or []]
    t = TextTable("grid", "Cases × conditions (passes/attempts; ~ flaky, E errored)",
                  ["case", *(f"#{lab.number.get(c, short_id(c))}" for c in cids)],
                  align=["l"] + ["r"] * len(cids))
    t.column_tips = ["", *(lab.full.get(c, c) for c in cids)]
    rows = [r for r in grid.get("cases") or [] if show_all or r.get("differs")]
    for r in rows[:limit]:
        t.add([str(r["case_id"]), *(cell_text(r["cells"].get(c)) for c in cids)])
    if cids:
        t.notes.append("columns: # of the Conditions table")
    hidden_same = int(grid.get("n_cases", 0)) - int(grid.get("n_differing", 0))
    t.empty = "every case has the same verdict in every condition"
    if not show_all and hidden_same:
        t.notes.append(f"{hidden_same} case(s) with the same verdict everywhere not shown")
    if len(rows) > limit:
        t.notes.append(f"{len(rows) - limit} more case(s) not shown; every case × condition "
                       "is in report.json's case_grid (report.cases.jsonl when large)")
    return t


def all_tables(report: Mapping[str, Any], *, show_all_cases: bool = False) -> list[TextTable]:
    """Every table in display order."""
    return [
        matrix_table(report),
        anova_table(report),
        contrasts_table(report),
        *([simple_effects_table(report)] if report.get("simple_effects") else []),
        per_judge_table(report),
        judge_means_table(report),
        comparisons_table(report),
        thresholds_table(report),
        grid_table(report, show_all=show_all_cases),
        leaderboard_table(report),
        pairwise_table(report),
    ]
