"""ANOVA from a tidy DataFrame: average replications, drop incomplete cases, dispatch.

Rows are observations with a `case` column, one column per factor and a `response`
column (NaN responses are ignored). Replications are averaged to one value per
(case, cell) first. Balanced data (after dropping cases that miss a cell, listed in
the second return value) go to the closed form; with `method="lmm"` and
`keep_incomplete=True` every case is kept and the random-intercept model is fitted
by REML (`reml`), with Wald F and Satterthwaite df per term.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.stats.balanced import (
    CONSTANT_REL,
    REASONS,
    anova_balanced,
    check_method,
    too_large,
)
from eval_harness.analysis.stats.design import term_name, term_subsets
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.model_terms import design_matrix, wald_term_result
from eval_harness.analysis.stats.reml import fit_random_intercept
from eval_harness.analysis.stats.results import LMM_LABEL, AnovaResult, ExcludedTerm, TermResult


def observed_levels(
    df: pd.DataFrame, factors: Sequence[str], order: Mapping[str, Sequence[Any]] | None = None
) -> list[tuple[Any, ...]]:
    """Observed levels per factor: in `order` if given, else categorical or first-seen order."""
    out = []
    for f in factors:
        seen = list(pd.unique(df[f]))
        if order and f in order:
            lv = [x for x in order[f] if x in seen] + [x for x in seen if x not in order[f]]
        elif isinstance(df[f].dtype, pd.CategoricalDtype):
            lv = [x for x in df[f].cat.categories if x in seen]
        else:
            lv = seen
        out.append(tuple(lv))
    return out


def cell_means(df: pd.DataFrame, factors: Sequence[str], response: str, case: str) -> pd.DataFrame:
    """One row per (case, cell): the mean over replications."""
    missing = [c for c in (case, response, *factors) if c not in df.columns]
    if missing:
        raise StatsInputError(f"missing column(s) {missing} in the tidy data")
    data = df[[case, *factors, response]].dropna(subset=[response])
    return data.groupby([case, *factors], sort=False, observed=True)[response].mean().reset_index()


def _balanced_array(
    cm: pd.DataFrame, factors: Sequence[str], levels: Sequence[tuple[Any, ...]], response: str, case: str
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Cases × cells array of the complete cases, and the incomplete ones with their gaps."""
    cells = list(itertools.product(*levels))
    cases = list(pd.unique(cm[case]))
    keys = pd.MultiIndex.from_frame(cm[list(factors)])
    col = pd.MultiIndex.from_tuples(cells).get_indexer(keys)
    row = pd.Index(cases).get_indexer(cm[case])
    table = np.full((len(cases), len(cells)), np.nan)
    table[row, col] = cm[response].to_numpy(dtype=float)
    complete = ~np.isnan(table).any(axis=1)
    excluded = [
        {
            "case_id": cases[i],
            "reason": "missing cells",
            "missing": [dict(zip(factors, cells[j], strict=True)) for j in np.flatnonzero(np.isnan(table[i]))],
        }
        for i in np.flatnonzero(~complete)
    ]
    y = table[complete].reshape((int(complete.sum()), *[len(lv) for lv in levels]))
    return y, excluded


def anova_frame(
    df: pd.DataFrame,
    factors: Sequence[str],
    *,
    response: str = "value",
    case: str = "case_id",
    method: str = "rm",
    keep_incomplete: bool = False,
    levels: Mapping[str, Sequence[Any]] | None = None,
    ddf: str = "kenward-roger",
) -> tuple[AnovaResult, list[dict[str, Any]]]:
    """ANOVA of tidy rows; returns the result and the excluded cases (with missing cells).
    `ddf` (`kenward-roger` or `satterthwaite`): the denominator df of `mixed`."""
    if isinstance(method, str) and method.lower() in ("auto", "mixed"):
        from eval_harness.analysis.stats.slopes import fitted_mixed  # on first use

        cm = cell_means(df, factors, response, case)
        lv = observed_levels(cm, factors, levels)
        y, excluded = _balanced_array(cm, factors, lv, response, case)
        if method.lower() == "auto" and not excluded:
            return anova_balanced(y, factors, lv, "rm"), []
        return fitted_mixed(cm, factors, lv, response, case, ddf), []
    method = check_method(method)
    if keep_incomplete and method != "lmm":
        raise StatsInputError("keep_incomplete needs method 'lmm' (rm requires complete cases)")
    cm = cell_means(df, factors, response, case)
    lv = observed_levels(cm, factors, levels)
    if keep_incomplete:
        return fitted_lmm(cm, factors, lv, response, case), []
    y, excluded = _balanced_array(cm, factors, lv, response, case)
    return anova_balanced(y, factors, lv, method), excluded


def fitted_lmm(
    cm: pd.DataFrame, factors: Sequence[str], levels: Sequence[tuple[Any, ...]], response: str, case: str
) -> AnovaResult:
    """Random-intercept REML fit on (possibly unbalanced) cell means."""
    keep = [j for j, lv in enumerate(levels) if len(lv) >= 2]
    kf = [factors[j] for j in keep]
    excluded = [
        ExcludedTerm(term_name(factors, s), "single level")
        for s in term_subsets(len(factors))
        if any(j not in keep for j in s)
    ]
    y = cm[response].to_numpy(dtype=float)
    case_codes = pd.factorize(cm[case])[0]
    n_cases = int(case_codes.max()) + 1 if len(y) else 0
    base = dict(method="lmm", label=LMM_LABEL, factors=tuple(factors), n_cases=n_cases,
                levels={f: tuple(levels[j]) for j, f in enumerate(factors)},
                fit="fitted (REML random intercept, Satterthwaite df)")
    subsets = term_subsets(len(kf))

    def all_excluded(reason: str) -> AnovaResult:
        extra = [ExcludedTerm(term_name(kf, s), reason) for s in subsets]
        return AnovaResult(**base, terms={}, excluded_terms=tuple(excluded + extra),  # type: ignore[arg-type]
                           case_variance=None, residual_variance=None)

    if not kf:
        return all_excluded("single level")
    x, cols = design_matrix(cm, kf, [levels[j] for j in keep])
    if too_large(y):
        return all_excluded(REASONS[6])
    ss_total = float(((y - y.mean()) ** 2).sum()) if len(y) else 0.0
    if len(y) == 0 or not ss_total > CONSTANT_REL * float(y @ y):
        return all_excluded(REASONS[2])
    if len(y) <= x.shape[1] or np.linalg.matrix_rank(x) < x.shape[1]:
        return all_excluded("too few observations or an empty cell: the full-factorial model is not estimable")
    from eval_harness.analysis.stats.slopes import (  # on first use
        SlopesModel,
        term_hypothesis,
    )

    with np.errstate(all="ignore"):
        fit = fit_random_intercept(x, y, case_codes)
        if not fit.sigma2 > 1e-10 * ss_total / len(y):
            return all_excluded("zero residual: F would be infinite")
        terms: dict[str, TermResult] = {}
        for s in subsets:
            name = term_name(kf, s)
            kept_levels = [levels[j] for j in keep]
            hyp = term_hypothesis(kept_levels, s, cols[s], x)  # type 1 for one factor
            result = wald_term_result(name, fit, fit.sigma2, hyp, float(cols[s].size))
            if result is None:
                excluded.append(ExcludedTerm(name, REASONS[5]))
                continue
            terms[name] = result
    notes = ("case variance on the REML boundary (0): the model is OLS on cell means",) if fit.boundary else ()
    model = SlopesModel(fit, tuple(kf), tuple(tuple(levels[j]) for j in keep), dict(cols), (), (),
                        "(1 | case)")
    return AnovaResult(**base, terms=terms, excluded_terms=tuple(excluded),  # type: ignore[arg-type]
                       case_variance=fit.sigma2_case, residual_variance=fit.sigma2, notes=notes,
                       model=model)
