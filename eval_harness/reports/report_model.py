"""The report model: one JSON-ready dict every renderer reads (and ``report.json`` stores).

``build_report`` gathers the analysis outputs (``anova.json``, ``comparisons.json``, the
leaderboard, threshold and pairwise results) and what only the tidy frame knows (pass
rates, flaky cases, latency, cost, the case × condition grid) into one document whose
fields are documented in docs/reports.md. Optional inputs that are missing become
``None`` (rendered "not available"). Nothing here computes a statistic: the per-condition
summaries, the Pareto front and the descriptive tables come from
``eval_harness.analysis.anova`` (``condition_summaries``, ``descriptives``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from eval_harness.analysis.anova.condition_summaries import (
    condition_rows,
    cost_quality_front,
    factors_of,
)
from eval_harness.analysis.anova.descriptives import (
    case_grid,
    judge_means,
    marginal_means,
    usable_cells,
)
from eval_harness.analysis.compare.build import condition_table
from eval_harness.analysis.compare.verdicts import VerdictRule, verdict_tables
from eval_harness.reports import fmt
from eval_harness.reports.documents import AnalysisDocuments

SCHEMA_VERSION = 1
KIND = "eval_harness.report"


def _terms(anova: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, t in (anova.get("terms") or {}).items():
        if not isinstance(t, Mapping):
            continue
        rows.append(
            {
                "term": name,
                "F": t.get("F"),
                "df_num": t.get("df_num"),
                "df_den": t.get("df_den"),
                "gg_epsilon": t.get("gg_epsilon"),
                "p_uncorrected": t.get("p_uncorrected"),
                "p_raw": t.get("p_raw"),
                "p_adjusted": t.get("p_adjusted"),
                "partial_eta_sq": t.get("partial_eta_sq"),
                "partial_eta_sq_error": t.get("partial_eta_sq_error"),
                "ges": t.get("ges"),
                "significant": t.get("significant"),
            }
        )
    return rows


def _contrasts(anova: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for factor, block in (anova.get("contrasts") or {}).items():
        if not isinstance(block, Mapping):
            continue
        for pair in block.get("pairs") or []:
            out.append(
                {
                    "factor": factor,
                    "correction": block.get("correction"),
                    **{k: pair.get(k) for k in ("a", "b", "estimate", "se", "df", "ci",
                                                 "p_raw", "p_adjusted", "significant")},
                }
            )
    return out


def _simple_effects(anova: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Contrasts of `factor` within each level `at` of `by` (one family per block)."""
    out = []
    for block in anova.get("simple_effects") or []:
        if not isinstance(block, Mapping):
            continue
        for pair in block.get("pairs") or []:
            out.append({
                "factor": block.get("factor"), "by": block.get("by"), "at": block.get("at"),
                "correction": block.get("correction"), "family_size": block.get("family_size"),
                **{k: pair.get(k) for k in ("a", "b", "estimate", "se", "df", "ci",
                                             "p_raw", "p_adjusted", "significant")},
            })
    return out


def _per_judge(anova: Mapping[str, Any]) -> dict[str, Any] | None:
    block = anova.get("per_judge")
    if not isinstance(block, Mapping):
        return None
    rows = []
    for judge, jb in (block.get("judges") or {}).items():
        for term, t in ((jb or {}).get("terms") or {}).items():
            if isinstance(t, Mapping):
                rows.append(
                    {
                        "judge": judge,
                        "term": term,
                        "F": t.get("F"),
                        "p_raw": t.get("p_raw"),
                        "p_adjusted": t.get("p_adjusted"),
                        "partial_eta_sq": t.get("partial_eta_sq"),
                        "significant": t.get("significant"),
                    }
                )
    return {
        "correction": block.get("correction"),
        "family_size": block.get("family_size"),
        "tests": rows,
        "hits": [r for r in rows if r["significant"] is True],
        "excluded": list(block.get("excluded") or []),
    }


def _vs_reference(comparisons: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rec in (comparisons or {}).get("comparisons") or []:
        if rec.get("kind") != "reference":
            continue
        comp = rec.get("composite") or {}
        overall = rec.get("overall") or {}
        out[str((rec.get("candidate") or {}).get("condition_id"))] = {
            "diff": comp.get("estimate"),
            "ci": comp.get("ci"),
            "p": comp.get("p"),
            "pass_rate_change": overall.get("statistic"),
            "pass_rate_p": overall.get("p"),
            "verdict": rec.get("verdict"),
        }
    return out


def _comparison_summaries(comparisons: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    if not comparisons:
        return None
    out = []
    baseline_file = str((comparisons.get("baseline") or {}).get("path") or "") or None
    for rec in comparisons.get("comparisons") or []:
        overall = rec.get("overall") or {}
        named = ({"baseline_file": baseline_file}
                 if rec.get("kind") == "baseline" and baseline_file else {})
        out.append(
            {
                **named,  # the baseline compared against, by its file
                "kind": rec.get("kind"),
                "reference": (rec.get("reference") or {}).get("label"),
                "candidate": (rec.get("candidate") or {}).get("label"),
                "candidate_id": (rec.get("candidate") or {}).get("condition_id"),
                "reference_id": (rec.get("reference") or {}).get("condition_id"),
                "candidate_levels": (rec.get("candidate") or {}).get("levels"),
                "reference_levels": (rec.get("reference") or {}).get("levels"),
                "verdict": rec.get("verdict"),
                "n_cases_compared": rec.get("n_cases_compared"),
                "pass_rate_change": overall.get("statistic"),
                "pass_rate_ci": overall.get("bootstrap_ci"),
                "p": overall.get("p"),
                "test": overall.get("method"),
                "composite_diff": (rec.get("composite") or {}).get("estimate"),
                "composite_ci": (rec.get("composite") or {}).get("ci"),
                **{k: list(rec.get(k) or []) for k in ("regressed", "improved", "modified",
                                                       "new", "removed", "errored")},
            }
        )
    return out


def _leaderboard(board: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not board:
        return None
    rows = []
    for r in board.get("conditions") or []:
        # leaderboard.json names the ranked score "quality" (composite, or pass rate when
        # no composite exists: ``quality_metric``); older files called it "composite".
        comp = r.get("quality") or r.get("composite") or {}
        vs = r.get("vs_leader") or {}
        rows.append(
            {
                "rank": r.get("rank"),
                "condition_id": r.get("condition_id"),
                "label": r.get("label"),
                "levels": r.get("levels"),
                "mean": comp.get("mean"),
                "ci": comp.get("ci"),
                "pass_rate": r.get("pass_rate"),
                "cost_usd": r.get("cost_usd"),
                "latency_s": r.get("latency_s"),
                "vs_leader": vs.get("estimate"),
                "vs_leader_ci": vs.get("ci"),
                "vs_leader_p_adjusted": vs.get("p_adjusted"),
                "indistinguishable_from_best": r.get("indistinguishable_from_best"),
            }
        )
    return {
        "n_cases": board.get("n_cases"),
        "quality_metric": board.get("quality_metric", "composite"),
        "correction": board.get("correction"),
        "rows": rows,
        "saturation": board.get("saturation"),
        "strata": board.get("strata"),
        "excluded_cases": list(board.get("excluded_cases") or []),
    }


def _display(conditions: list[dict[str, Any]], factors: list[str]) -> dict[str, dict[str, str]]:
    """Compact level names per factor (``fmt.level_display``) over the observed levels."""
    levels: dict[str, list[str]] = {f: [] for f in factors}
    for c in conditions:
        for f in factors:
            v = str((c.get("levels") or {}).get(f, ""))
            if v not in levels[f]:
                levels[f].append(v)
    return fmt.level_display(levels)


def _rule_of(comparisons: Mapping[str, Any] | None) -> VerdictRule:
    """The pass rule recorded in ``comparisons.json`` (``verdict_rule``), else the default:
    a regenerated report counts passes as the analysis did."""
    return VerdictRule.from_record((comparisons or {}).get("verdict_rule") or {})


def build_report(
    docs: AnalysisDocuments,
    frame: pd.DataFrame,
    *,
    generated_at: str | None = None,
    title: str | None = None,
    tables: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """The report document (schema_version 1, see docs/reports.md) of ``docs`` and the
    tidy ``frame`` (``docs.report`` is not read: this builds it).

    ``tables``: (samples, case verdicts) of ``frame`` under the default verdict rule, when
    the caller already built them (``analysis.compare.verdicts.verdict_tables``)."""
    anova, comparisons = docs.anova, docs.comparisons
    leaderboard, thresholds, pairwise = docs.leaderboard, docs.thresholds, docs.pairwise
    frame = _with_design_order(frame, anova)
    samples, cases = tables if tables is not None else verdict_tables(
        frame, _rule_of(comparisons))
    conds = condition_table(frame)  # once: rows, marginal means
    # the per-condition mean and CI are anova.json's condition summaries (computed once,
    # in the analysis); the rows add pass rates, verdicts, latency and cost
    rows = condition_rows(frame, samples, cases, conds, summaries=anova.get("condition_summaries"),
                          clip=anova.get("response", "composite") == "composite")
    conditions = _in_level_order(rows, frame.attrs.get("levels") or {})
    vs = _vs_reference(comparisons)
    ref = (comparisons or {}).get("reference") or None
    for c in conditions:
        is_ref = isinstance(ref, Mapping) and c["condition_id"] == ref.get("condition_id")
        c["is_reference"] = is_ref
        c["vs_reference"] = vs.get(c["condition_id"])
    factors = factors_of(frame)
    display = _display(conditions, factors)
    for c in conditions:
        c["short_label"] = fmt.compact_label(c.get("levels"), display, c["condition_id"][:6])
    usable = usable_cells(cases, frame, conds)  # one merge for every marginal mean
    # unique() before str(): no text copy of every row (the column is a categorical)
    evals = sorted({str(e) for e in frame["eval"].unique()}) if "eval" in frame.columns else []
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "generated_at": generated_at,
        "eval": ", ".join(evals) or None,
        **({"title": title} if title else {}),  # the config's `title`: the report heading
        "response": anova.get("response", "composite"),
        "method": anova.get("method"),
        "correction": anova.get("correction"),
        "alpha": anova.get("alpha", 0.05),
        "family_size": anova.get("family_size"),
        "design": anova.get("design") or {"factors": frame.attrs.get("levels", {})},
        "factors": factors,
        "level_display": display,
        "reference": ref,
        "pass_rule": ((comparisons or {}).get("verdict_rule") or {}).get("text"),
        "conditions": conditions,
        "anova": {
            "available": bool(anova.get("terms")) or bool(anova.get("excluded_terms")),
            "terms": _terms(anova),
            "excluded_terms": list(anova.get("excluded_terms") or []),
            "excluded_cases": list(anova.get("excluded_cases") or []),
        },
        "contrasts": _contrasts(anova),
        "simple_effects": _simple_effects(anova),
        "per_judge": _per_judge(anova),
        "judge_means": judge_means(frame, [c["condition_id"] for c in conditions]),
        "variance_components": anova.get("variance_components"),
        "power": anova.get("power"),
        "pareto": cost_quality_front(conditions),
        "main_effects": {f: marginal_means(cases, frame, [f], merged=usable)
                         for f in factors},
        "interactions": {
            f"{a}:{b}": marginal_means(cases, frame, [a, b], merged=usable)
            for i, a in enumerate(factors)
            for b in factors[i + 1 :]
        },
        "comparisons": _comparison_summaries(comparisons),
        "leaderboard": _leaderboard(leaderboard),
        "thresholds": None if thresholds is None else list(thresholds),
        "pairwise": None if pairwise is None else dict(pairwise),
        "case_grid": case_grid(cases, [c["condition_id"] for c in conditions]),
        "issues": list(frame.attrs.get("issues") or []),
        "data_notes": data_notes(anova, frame),
    }


def data_notes(anova: Mapping[str, Any], frame: pd.DataFrame) -> list[str]:
    """What the analysis left out or merged, one line each, so nothing is dropped silently:
    loader issues (duplicates, conflicts, runs without levels), excluded cases, errored
    samples (never scored 0), dropped factors and analysis notes."""
    notes = [str(i.get("detail") or i.get("kind")) for i in frame.attrs.get("issues") or []]
    excluded = list(anova.get("excluded_cases") or [])
    if excluded:
        ids = ", ".join(str(c.get("case_id")) for c in excluded[:8])
        more = f" (+{len(excluded) - 8} more)" if len(excluded) > 8 else ""
        notes.append(f"{len(excluded)} case(s) excluded from the ANOVA (missing cells): {ids}{more}")
    errored = (anova.get("errored_samples") or {}).get("count") or 0
    if errored:
        notes.append(f"{errored} errored sample(s) excluded (never scored 0); see anova.json "
                     "errored_samples")
    for dropped in (anova.get("design") or {}).get("dropped_factors") or []:
        notes.append(f"factor {dropped.get('factor')} dropped: {dropped.get('reason')}")
    notes.extend(str(n) for n in anova.get("notes") or [] if not str(n).startswith("factor "))
    return notes


def _with_design_order(frame: pd.DataFrame, anova: Mapping[str, Any]) -> pd.DataFrame:
    """Level order from anova.json's design (the matrix order when the analysis had the
    config), so a report regenerated from run directories alone keeps the matrix order."""
    design = (anova.get("design") or {}).get("factors") or {}
    if not design:
        return frame
    out = frame.copy(deep=False)
    out.attrs = {**frame.attrs, "levels": {**(frame.attrs.get("levels") or {}), **design}}
    return out


def _in_level_order(rows: list[dict[str, Any]], order: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Conditions sorted by each factor's level order (stable for unknown levels)."""
    def rank(row: dict[str, Any]) -> tuple[int, ...]:
        levels = row.get("levels") or {}
        out = []
        for factor, values in order.items():
            names = [str(v) for v in values]
            value = str(levels.get(factor))
            out.append(names.index(value) if value in names else len(names))
        return tuple(out)

    return sorted(rows, key=rank)
