"""Closed-form ANOVA of a balanced cases × cells design, under `rm` or `lmm`.

rm (default) — one error stratum per term (Maxwell, Delaney & Kelley 2018, ch. 12):

    F_T = (SS_T / df_T) / (SS_T×case / (df_T (n−1)))
    p_raw = P[F(ε df_T, ε df_T (n−1)) > F_T],  ε = Greenhouse–Geisser epsilon

  as R `afex::aov_ez(..., anova_table = list(correction = "GG", es = "pes"))`.

lmm — random intercept `y ~ A*B*... + (1|case)` (compound symmetry): all term × case
strata pool into one residual, SS_res = Σ_T SS_T×case with df_res = (C−1)(n−1).
Balanced REML estimates are the ANOVA ones: σ² = MS_res, σ²_case = (MS_case − MS_res)/C.
While σ²_case > 0, F_T = MS_T / MS_res on (df_T, df_res) — lmerTest's type-3
Satterthwaite test. When σ²_case ≤ 0, REML sits on the boundary σ²_case = 0, the model
is OLS on cell means and the residual absorbs the case stratum:
MS_res = (SS_case + SS_res) / (C (n−1)), df_res = C (n−1) (as lmerTest then reports).

Degenerate data are detected here, not left to floating point: sums of squares below
1e-10 of the within-case variation (SS_total − SS_case; see `zero_tolerance`) are exactly zero; a response whose total SS is below 1e-20 of its
raw sum of squares is constant. Terms without a finite p go to `excluded_terms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval_harness.analysis.stats.design import term_name, term_subsets
from eval_harness.analysis.stats.dist import f_sf
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.results import (
    LMM_LABEL,
    RM_LABEL,
    AnovaResult,
    ExcludedTerm,
    TermResult,
)
from eval_harness.analysis.stats.sums import DesignSums, design_sums

REL_ZERO = 1e-10
CONSTANT_REL = 1e-20
METHODS = ("rm", "lmm")

# Exclusion reasons, indexed by the integer codes of the vectorised tests.
REASONS = {
    1: "fewer than 2 complete cases: no error degrees of freedom",
    2: "constant response: no variation at all",
    3: "no variation: the term and its error stratum are both zero",
    4: "zero error: the error stratum has no variation, F would be infinite",
    5: "non-finite F or p",
    6: "values too large (|y| > 1e150): sums of squares overflow floating point; rescale the response",
}
MAX_ABS = 1e150  # beyond this, squares (and so every sum of squares) overflow a float


def too_large(y: np.ndarray) -> bool:
    """True when the response is too large in magnitude for sums of squares."""
    return bool(y.size) and float(np.max(np.abs(y))) > MAX_ABS


@dataclass(frozen=True)
class TermTests:
    """Vectorised tests of one term (arrays over the batch axes)."""

    subset: tuple[int, ...]
    F: np.ndarray
    df_num: int
    df_den: np.ndarray
    p_uncorrected: np.ndarray
    p_raw: np.ndarray
    gg_epsilon: np.ndarray | None
    ss: np.ndarray
    ss_error: np.ndarray
    reason: np.ndarray  # 0 = tested, otherwise a key of REASONS


@dataclass(frozen=True)
class Components:
    """Random-intercept variance components (ANOVA = balanced REML estimates)."""

    case: np.ndarray
    residual: np.ndarray
    boundary: np.ndarray
    ss_res: np.ndarray
    ss_case: np.ndarray


def check_method(method: str) -> str:
    """Normalise a method name (`rm` | `lmm`, any case)."""
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise StatsInputError(f"unknown ANOVA method {method!r}; use one of {METHODS}")
    return method.lower()


def zero_tolerance(s: DesignSums) -> np.ndarray:
    """Sums of squares at or below this are exactly zero (rounding residue).

    Relative to the *within-case* variation W = Σ_T (SS_T + SS_T×case) = SS_total − SS_case,
    not to the total: every term is tested inside cases, so a within-case effect 10⁵ times
    smaller than the spread between cases is still real. W itself is zero when it is below
    1e-20 of Σy² (then every within-case sum is residue and every term is excluded).
    """
    within = sum((t.ss + t.ss_error for t in s.terms), start=np.zeros_like(s.ss_total))
    real = within > CONSTANT_REL * s.sum_sq_raw
    return np.where(real, REL_ZERO * within, np.inf)


def variance_components(s: DesignSums) -> Components:
    """σ²_case and σ² of the random-intercept model, truncated at the boundary."""
    n, c = s.n_cases, s.n_cells
    ss_res = sum((t.ss_error for t in s.terms), start=np.zeros_like(s.ss_total))
    with np.errstate(all="ignore"):
        ms_res = ss_res / ((c - 1) * (n - 1))
        ms_case = s.ss_case / (n - 1)
        case = (ms_case - ms_res) / c
        boundary = ~(case > 0)
        pooled = (ss_res + s.ss_case) / (c * (n - 1))
    residual = np.where(boundary, pooled, ms_res)
    return Components(np.where(boundary, 0.0, case), residual, boundary, ss_res, s.ss_case)


def term_tests(s: DesignSums, method: str) -> tuple[list[TermTests], Components]:
    """F, df and p of every term for a batch of balanced experiments."""
    n, c = s.n_cases, s.n_cells
    comp = variance_components(s)
    tol = zero_tolerance(s)
    constant = ~(s.ss_total > CONSTANT_REL * s.sum_sq_raw)
    base_reason = np.where(constant, 2, 0) if n >= 2 else np.ones_like(s.ss_total, dtype=int)
    out: list[TermTests] = []
    with np.errstate(all="ignore"):
        for t in s.terms:
            ss = np.where(t.ss > tol, t.ss, 0.0)
            eps: np.ndarray | None
            if method == "rm":
                err = np.where(t.ss_error > tol, t.ss_error, 0.0)
                df_den = np.full_like(ss, float(t.df * (n - 1)))
                # n − 1 < df_T: the term's error SSP matrix is singular, ε is undefined;
                # afex (car::Anova) then reports the uncorrected test ("corrections not
                # available"), and so do we
                eps = (np.clip(t.gg_epsilon, 1.0 / t.df, 1.0) if n - 1 >= t.df
                       else np.full_like(ss, np.nan))
            else:
                pooled = np.where(comp.boundary, comp.ss_res + comp.ss_case, comp.ss_res)
                err = np.where(pooled > tol, pooled, 0.0)
                df_den = np.where(comp.boundary, float(c * (n - 1)), float((c - 1) * (n - 1)))
                eps = None
            f_val = (ss / t.df) / (err / df_den)
            p_unc = f_sf(f_val, t.df, df_den)
            p_raw = (p_unc if eps is None
                     else np.where(np.isnan(eps), p_unc, f_sf(f_val, t.df * eps, df_den * eps)))
            reason = base_reason.copy()
            reason = np.where((reason == 0) & (err == 0) & (ss == 0), 3, reason)
            reason = np.where((reason == 0) & (err == 0), 4, reason)
            finite = np.isfinite(f_val) & np.isfinite(p_raw) & np.isfinite(p_unc)
            reason = np.where((reason == 0) & ~finite, 5, reason)
            bad = reason != 0
            out.append(
                TermTests(
                    t.subset,
                    np.where(bad, np.nan, f_val),
                    t.df,
                    df_den,
                    np.where(bad, np.nan, p_unc),
                    np.where(bad, np.nan, p_raw),
                    None if eps is None else np.where(bad, np.nan, eps),
                    ss,
                    err,
                    reason,
                )
            )
    return out, comp


def balanced_pvalues(y: np.ndarray, k: int, method: str = "rm") -> dict[tuple[int, ...], np.ndarray]:
    """p_raw of every term for a batch `y` of shape (..., n, L1..Lk); NaN when excluded.

    The vectorised path behind `anova_balanced`, used for simulations.
    """
    tests, _ = term_tests(design_sums(y, k), check_method(method))
    return {t.subset: t.p_raw for t in tests}


def _validate(y: np.ndarray, factors: Sequence[str], levels: Sequence[Sequence[Any]]) -> None:
    if len(factors) == 0 or len(factors) != len(levels):
        raise StatsInputError("need one level list per factor and at least one factor")
    if len(set(factors)) != len(factors):
        raise StatsInputError(f"duplicate factor names in {list(factors)}")
    expected = tuple(len(lv) for lv in levels)
    if y.ndim != len(factors) + 1 or y.shape[1:] != expected:
        raise StatsInputError(f"Y has shape {y.shape}; expected (n_cases, *{expected})")
    if not np.all(np.isfinite(y)):
        raise StatsInputError("Y contains NaN or infinite values; drop incomplete cases first")


def anova_balanced(
    Y: np.ndarray,
    factors: Sequence[str],
    levels: Sequence[Sequence[Any]],
    method: str = "rm",
) -> AnovaResult:
    """ANOVA table of a balanced design, one value per case per cell.

    `Y` has shape (n_cases, L1, ..., Lk). Factors with a single level are removed
    and every term involving them is reported as excluded ("single level").
    """
    method = check_method(method)
    y = np.asarray(Y, dtype=float)
    _validate(y, factors, levels)
    keep = [j for j, lv in enumerate(levels) if len(lv) >= 2]
    excluded: list[ExcludedTerm] = []
    all_levels = {f: tuple(levels[j]) for j, f in enumerate(factors)}
    for subset in term_subsets(len(factors)):
        single = [factors[j] for j in subset if j not in keep]
        if single:
            reason = "single level" if len(subset) == 1 else f"single level ({', '.join(single)})"
            excluded.append(ExcludedTerm(term_name(factors, subset), reason))
    kept_factors = [factors[j] for j in keep]
    y = y.reshape((y.shape[0], *[len(levels[j]) for j in keep])) if keep else y
    terms: dict[str, TermResult] = {}
    notes: list[str] = []
    case_var: float | None = None
    resid_var: float | None = None
    if keep and y.shape[0] < 2:
        excluded.extend(
            ExcludedTerm(term_name(kept_factors, s), REASONS[1]) for s in term_subsets(len(keep))
        )
    elif keep and too_large(y):
        excluded.extend(
            ExcludedTerm(term_name(kept_factors, s), REASONS[6]) for s in term_subsets(len(keep))
        )
    elif keep:
        tests, comp = term_tests(design_sums(y, len(keep)), method)
        for t in tests:
            name = term_name(kept_factors, t.subset)
            if int(t.reason) != 0:
                excluded.append(ExcludedTerm(name, REASONS[int(t.reason)]))
                continue
            terms[name] = _term_result(name, t, method)
            if method == "rm" and y.shape[0] - 1 < t.df_num:
                notes.append(f"{name}: Greenhouse–Geisser correction not available (n − 1 = "
                             f"{y.shape[0] - 1} < {int(t.df_num)} df; the error SSP matrix is "
                             "singular): uncorrected p, as afex")
        case_var, resid_var = float(comp.case), float(comp.residual)
        if bool(comp.boundary) and method == "lmm":  # an rm test never uses this estimate
            notes.append(
                "case variance estimate was negative and is truncated at 0 "
                "(REML boundary); the residual pools the case stratum"
            )
    order = {term_name(factors, s): i for i, s in enumerate(term_subsets(len(factors)))}
    excluded.sort(key=lambda e: order.get(e.term, len(order)))
    return AnovaResult(
        method=method,
        label=RM_LABEL if method == "rm" else LMM_LABEL,
        factors=tuple(factors),
        levels=all_levels,
        n_cases=int(y.shape[0]),
        terms=terms,
        excluded_terms=tuple(excluded),
        case_variance=case_var,
        residual_variance=resid_var,
        fit="closed-form balanced",
        notes=tuple(notes),
    )


def _term_result(name: str, t: TermTests, method: str) -> TermResult:
    f_val, df_den = float(t.F), float(t.df_den)
    ss, err = float(t.ss), float(t.ss_error)
    return TermResult(
        term=name,
        F=f_val,
        df_num=float(t.df_num),
        df_den=df_den,
        p_uncorrected=float(t.p_uncorrected),
        p_raw=float(t.p_raw),
        gg_epsilon=None if t.gg_epsilon is None or np.isnan(t.gg_epsilon) else float(t.gg_epsilon),
        partial_eta_sq=ss / (ss + err) if method == "rm" else f_val * t.df_num / (f_val * t.df_num + df_den),
        ss=ss,
        ss_error=err,
        ms=ss / t.df_num,
        ms_error=err / df_den,
    )
