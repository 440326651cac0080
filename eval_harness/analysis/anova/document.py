"""Assemble `anova.json` (DESIGN.md contract; every field in docs/statistics.md).

    frame (loader) ─► design check ─► ANOVA (auto: rm if complete, else mixed | rm | mixed
          | lmm) ─► correction over terms
          ─► contrasts per factor (+ simple effects) ─► per-judge screen (BH family)
          ─► variance components ─► power (MDE) ─► condition summaries, Pareto

Degenerate data never raise: terms without a finite p go to `excluded_terms` with a
reason, and the document stays valid against `schema/anova.schema.json`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from eval_harness._util.clock import utc_now_iso
from eval_harness._util.numbers import finite_or_none
from eval_harness._util.phase_timings import phase
from eval_harness._version import __version__
from eval_harness.analysis.anova.condition_summaries import (
    condition_summaries,
    errored_samples,
    pareto_frontier,
)
from eval_harness.analysis.anova.design_check import (
    DesignCheck,
    design_check,
    observed_levels,
    usable_rows,
)
from eval_harness.analysis.anova.document_parts import (
    contrasts_block,
    dropped_terms,
    parse_simple_effects,
    per_judge_block,
    simple_effects_block,
    term_order,
    term_table,
)
from eval_harness.analysis.anova.power import mde, variance_from_components
from eval_harness.analysis.stats import (
    LMM_LABEL,
    RM_LABEL,
    AnovaResult,
    anova_balanced,
    anova_frame,
    canonical_correction,
    replication_variance,
)
from eval_harness.analysis.stats.design import term_name
from eval_harness.analysis.stats.effect_size import PARTIAL_ETA_ERROR, generalized_eta_squared
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.slopes import DDF_METHODS, MIXED_LABEL, canonical_ddf, mixed_label
from eval_harness.errors import UsageError
from eval_harness.judges.composite import coerce_judge_specs

SCHEMA_VERSION = 1
SPHERICITY = {"rm": "greenhouse-geisser", "lmm": "compound symmetry (assumed)",
              "mixed": "not assumed (by-case random slopes)"}
METHODS = ("auto", "rm", "mixed", "lmm")
LABELS = {"rm": RM_LABEL, "lmm": LMM_LABEL, "mixed": MIXED_LABEL}
POWER_TARGET = 0.8


def choose_method(requested: str, dc: DesignCheck) -> tuple[str, str | None]:
    """(method, note): `auto` is rm when every case has every cell (the closed form is exact
    and equals the random-slopes model there), else the random-slopes mixed model, which
    keeps the incomplete cases instead of dropping them."""
    if requested != "auto":
        return requested, None
    if not dc.excluded_cases:
        return "rm", "method auto → rm: every case has a value in every cell"
    return "mixed", (f"method auto → mixed: {len(dc.excluded_cases)} of {dc.n_cases_total} "
                     "case(s) miss cells; the random-slopes mixed model keeps them (rm would "
                     "drop them)")


def _fit(dc: DesignCheck, method: str, keep_incomplete: bool, frame: pd.DataFrame,
         response: str, ddf: str) -> tuple[AnovaResult | None, list[dict[str, Any]]]:
    """The ANOVA of the kept factors, and the excluded cases."""
    if not dc.kept:
        return None, dc.excluded_cases
    if method == "mixed":
        rows = usable_rows(frame, response, ["case_id", *dc.kept, "value"])
        res, _ = anova_frame(rows, dc.kept, response="value", method="mixed", levels=dc.levels,
                             ddf=ddf)
        return res, []
    if keep_incomplete:
        rows = usable_rows(frame, response, ["case_id", *dc.kept, "value"])
        res, _ = anova_frame(rows, dc.kept, response="value", method="lmm",
                             keep_incomplete=True, levels=dc.levels)
        return res, []
    return anova_balanced(dc.y, dc.kept, [dc.levels[f] for f in dc.kept], method), dc.excluded_cases


def _power_inputs(method: str, vc: dict[str, Any], dc: DesignCheck,
                  n_cases: int) -> tuple[dict[str, Any], int]:
    """Variance components for the MDE. Under `mixed` the model's σ² leaves out the slope
    variances, which a paired contrast does see, so the MDE uses the ANOVA decomposition of
    the complete cases (as under rm); with fewer than 2 complete cases there is none."""
    if method != "mixed":
        return vc, n_cases
    if dc.y.shape[0] < 2:
        return {"residual": None}, n_cases
    side = anova_balanced(dc.y, dc.kept, [dc.levels[f] for f in dc.kept], "rm")
    return {"case": side.case_variance, "residual": side.residual_variance,
            "replication": vc.get("replication")}, n_cases


def _no_power_reason(method: str, dc: DesignCheck, tested: bool) -> str:
    """Why `_power` returned None, in the words of what happened."""
    if not tested:
        return "power/MDE not computed: no term could be tested"
    if method == "mixed" and dc.y.shape[0] < 2:
        return ("power/MDE not computed: it needs the variance decomposition of at least 2 "
                f"complete cases ({dc.y.shape[0]} here)")
    return "power/MDE not computed: the paired-difference variance is 0"


def _power(vc: Mapping[str, Any], n: int, k: int, alpha: float, tested: bool) -> dict[str, Any] | None:
    """MDE block; None (never 0 or rounding residue) when nothing could be tested or the
    paired-difference variance is zero: an MDE of 0 would claim any effect is detectable."""
    if not tested or vc.get("residual") is None or n < 2 or k < 1:
        return None
    prior = variance_from_components(vc, k)
    if not prior.case_var + 2.0 * prior.resid_var / k > 0.0:
        return None
    return {
        "mde": mde(prior.case_var, prior.resid_var, n, k, alpha, POWER_TARGET),
        "mde_t": mde(prior.case_var, prior.resid_var, n, k, alpha, POWER_TARGET, t=True),
        "alpha": alpha,
        "target_power": POWER_TARGET,
        "n_cases": n,
        "replications": k,
        "case_var": prior.case_var,
        "resid_var": prior.resid_var,
        "note": prior.note,
        "formula": "(z_{1-alpha/2} + z_power) * sqrt((case_var + 2*resid_var/K) / n)",
    }


def build_anova(
    frame: pd.DataFrame,
    *,
    response: str = "composite",
    method: str = "auto",
    correction: str = "holm",
    alpha: float = 0.05,
    per_judge: bool = False,
    keep_incomplete: bool = False,
    simple_effects: Any = None,
    judge_specs: Any = None,
    ddf: str = DDF_METHODS[0],
) -> dict[str, Any]:
    """The `anova.json` document (a JSON-ready dict) for `response` of a tidy frame; `ddf`:
    the denominator df of the mixed model (`kenward-roger` | `satterthwaite`)."""
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise UsageError(f"unknown ANOVA method {method!r}", hint=f"use one of {', '.join(METHODS)}")
    requested = method.lower()
    try:
        ddf = canonical_ddf(ddf)
    except StatsInputError as exc:
        raise UsageError(str(exc), hint="analysis.ddf / --ddf: kenward-roger or satterthwaite") from None
    correction = canonical_correction(correction)
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise UsageError(f"alpha must lie in (0, 1), got {alpha!r}")
    if keep_incomplete and requested != "lmm":
        raise UsageError("keeping incomplete cases needs the fitted model",
                         hint="use --method lmm with --keep-incomplete")
    specs = coerce_judge_specs(judge_specs) or {}
    if len(frame) and not (frame["judge"] == response).any():
        names = ", ".join(sorted(map(str, frame["judge"].unique())))
        raise UsageError(f"no judge named {response!r} in the runs", hint=f"use one of: {names}")
    dc = design_check(frame, response)
    method, chosen = choose_method(requested, dc)
    res, excluded_cases = _fit(dc, method, keep_incomplete, frame, response, ddf)
    order = term_order(dc.factors)
    excluded_terms = dropped_terms(dc.factors, dc.kept)
    terms: dict[str, dict[str, Any]] = {}
    family = 0
    notes = list(dc.notes) + ([chosen] if chosen else [])
    if dc.excluded_cases and not excluded_cases:  # the fitted model kept them: say so
        kept = (f"{len(dc.excluded_cases)} of {dc.n_cases_total} case(s) miss a cell: "
                "every case is kept in the fitted model")
        notes = [kept if n.endswith("excluded: not observed under every condition") else n
                 for n in notes]
    if res is not None:
        terms, family = term_table(res, correction, alpha)
        excluded_terms += [{"term": e.term, "reason": e.reason} for e in res.excluded_terms]
        notes += list(res.notes)
    elif dc.factors:
        notes.append("no factor has 2 observed levels: nothing to test")
    else:
        notes.append("no factors recorded: nothing to test")
    excluded_terms.sort(key=lambda e: order.get(e["term"], len(order)))
    y = dc.y
    add_effect_sizes(terms, y, dc.kept, method)
    model = res.model if res is not None else None
    with phase("contrasts"):
        contrasts = (contrasts_block(y, dc.kept, dc.levels, method, correction, alpha, terms,
                                     model) if dc.kept else {})
    se_pairs = parse_simple_effects(simple_effects, dc.kept, terms)
    n_cases = res.n_cases if res is not None else int(y.shape[0])
    kinds = frame.groupby("judge", sort=False, observed=True)["kind"].first() if len(frame) else pd.Series(dtype=object)
    pairwise = sorted({str(j) for j, k in kinds.items() if k == "pairwise"}
                      | {n for n, s in specs.items() if s.pairwise})
    vc = _variance_components(res, frame, response, dc)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "response": response,
        "design": {
            "factors": {f: list(dc.levels[f]) for f in dc.kept},
            "dropped_factors": dc.dropped,
            "n_conditions": int(np.prod([len(dc.levels[f]) for f in dc.kept])) if dc.kept else 0,
            "n_cases": n_cases,
            "n_cases_total": dc.n_cases_total,
            "replications": dc.replications,
            "replications_min": dc.replications_min,
            "balanced": dc.balanced,
        },
        "method": {
            "name": method,
            "requested": requested,
            "label": mixed_label(ddf) if method == "mixed" else LABELS[method],
            "sphericity": SPHERICITY[method],
            "fit": res.fit if res is not None else "not fitted",
        },
        "correction": correction,
        "alpha": alpha,
        "family_size": family,
        "terms": terms,
        "excluded_terms": excluded_terms,
        "excluded_cases": excluded_cases,
        "contrasts": contrasts,
        "simple_effects": simple_effects_block(y, dc.kept, dc.levels, method, correction, alpha,
                                               se_pairs, model)
        if se_pairs and (model is not None or y.shape[0] >= 2) else [],
        "variance_components": vc,
        "power": _power(*_power_inputs(method, vc, dc, n_cases), dc.replications, alpha,
                        bool(terms)),
        "errored_samples": errored_samples(frame, response),
        "pairwise_judges_excluded": pairwise,
        "notes": notes,
        "issues": list(frame.attrs.get("issues", [])),
        "generated_at": utc_now_iso(),  # SOURCE_DATE_EPOCH honoured
        "tool_version": __version__,
    }
    if doc["power"] is None and res is not None:
        notes.append(_no_power_reason(method, dc, bool(terms)))
    summaries = condition_summaries(frame, response, dc.factors, frame.attrs.get("levels", {}),
                                    frame.attrs.get("run_costs", ()))
    doc["condition_summaries"] = summaries
    doc["pareto"] = pareto_frontier(summaries)
    if per_judge:
        judges = [str(j) for j, k in kinds.items()
                  if k not in ("composite", "pairwise") and str(j) not in pairwise]
        with phase("per-judge"):
            pj_kept, pj_levels = _judge_factors(frame, judges, dc.factors)
            doc["per_judge"] = per_judge_block(frame, judges, pj_kept, pj_levels, requested,
                                               alpha, keep_incomplete, ddf)
    return jsonable(doc)  # type: ignore[no-any-return]


def add_effect_sizes(terms: dict[str, dict[str, Any]], y: np.ndarray, factors: list[str],
                     method: str) -> None:
    """Beside each term's partial η² (labelled with its error term): generalized η² on the
    complete cases, the same under every method (analysis.stats.effect_size)."""
    ges = generalized_eta_squared(y, factors) if factors else {}
    for name, term in terms.items():
        term["partial_eta_sq_error"] = PARTIAL_ETA_ERROR[method]
        term["ges"] = finite_or_none(ges.get(name, math.nan))
        term["ges_n_cases"] = int(y.shape[0]) if name in ges else 0


def _judge_factors(frame: pd.DataFrame, judges: list[str],
                   factors: list[str]) -> tuple[list[str], dict[str, list[Any]]]:
    """Factors with >= 2 levels observed in the judges' usable rows (the composite may
    be unavailable, e.g. imports without a config, while the judges are)."""
    if not judges or not factors:
        return [], {}
    value = frame["value"].to_numpy(dtype=float)
    keep = frame["judge"].isin(judges).to_numpy(dtype=bool) & np.isfinite(value)
    keep &= ~frame["errored"].to_numpy(dtype=bool)
    cols = [f for f in factors if f in frame.columns]
    seen = observed_levels(frame[cols][keep], factors, frame.attrs.get("levels", {}))
    kept = [f for f in factors if len(seen[f]) >= 2]
    return kept, {f: seen[f] for f in kept}


def _variance_components(res: AnovaResult | None, frame: pd.DataFrame, response: str,
                         dc: DesignCheck) -> dict[str, Any]:
    """σ²_case and σ² of the ANOVA on cell means; σ²_rep from the replicate-level data."""
    rep: float | None = None
    if dc.factors and dc.replications >= 2:
        rows = usable_rows(frame, response, ["case_id", *dc.factors, "value"])
        rep = replication_variance(rows, dc.factors, response="value")
    out: dict[str, Any] = {}
    model = res.model if res is not None else None
    if model is not None and model.slopes and hasattr(model.fit, "random_cov"):
        cov = model.cov if model.cov is not None else model.fit.random_cov()
        where = {c: k for k, c in enumerate(model.fit.structure.cols)}
        out["slopes"] = {term_name(list(model.factors), t): finite_or_none(
            float(np.mean([cov[where[c], where[c]] for c in model.cols[t]]))) for t in model.slopes}
    return out | {
        "case": finite_or_none(res.case_variance) if res is not None else None,
        "residual": finite_or_none(res.residual_variance) if res is not None else None,
        "replication": finite_or_none(rep),
    }


def jsonable(x: Any) -> Any:
    """Plain JSON types: numpy scalars unwrapped, NaN/inf → null, tuples → lists."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x
