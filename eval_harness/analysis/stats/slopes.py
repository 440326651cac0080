"""ANOVA and contrasts from the random-slopes mixed model (method `mixed`).

Structure rule: `re_rule` (documented in docs/statistics.md §3.3; mirrored in R by
tests/analysis/stats/r_reference/random_slopes.R).

Denominator df (`ddf`): Kenward–Roger by default (`kenward_roger`; lmerTest
`anova(fit, type = 3, ddf = "Kenward-Roger")`, afex::mixed's default), or Satterthwaite
(`reml.wald_term`, lmerTest's type-3 basis).
Terms: type-3 F (KR: the scaled Wald F on Φ_A; Satterthwaite: the Wald F on Cov(β̂)).
Contrasts: marginal means with equal weights over the other factors' levels (emmeans'
default), estimate lᵀβ̂; KR: SE √(lᵀ Φ_A l) and the KR df of l (`emmeans(fit, pairwise ~ A,
lmer.df = "kenward-roger")`); Satterthwaite: SE √(lᵀ Cov l) and its Satterthwaite df
(`lmer.df = "satterthwaite"`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from eval_harness._util import malloc_trim
from eval_harness.analysis.stats.balanced import CONSTANT_REL, REASONS, too_large
from eval_harness.analysis.stats.case_groups import unique_rows
from eval_harness.analysis.stats.correction import adjust_pvalues, canonical_correction
from eval_harness.analysis.stats.design import term_name, term_subsets
from eval_harness.analysis.stats.dist import t_ppf, t_sf
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.kenward_roger import KenwardRoger, adjust, kr_contrast
from eval_harness.analysis.stats.mixed import CaseSums, MixedFit
from eval_harness.analysis.stats.model_terms import (
    design_matrix,
    type3_hypothesis,
    wald_term_result,
)
from eval_harness.analysis.stats.re_rule import choose_and_fit, ridge_point
from eval_harness.analysis.stats.reml import WaldFit, satterthwaite_nu
from eval_harness.analysis.stats.results import AnovaResult, Contrast, ExcludedTerm, TermResult
from eval_harness.config.ddf import DDF_METHODS, DDF_NAMES, ddf_method, unknown_ddf


def mixed_label(ddf: str = DDF_METHODS[0]) -> str:
    """The method label of `mixed` results (anova.json `label`), naming the df method."""
    return f"mixed model with by-case random slopes (REML, {DDF_NAMES[ddf]})"


MIXED_LABEL = mixed_label()


def canonical_ddf(value: object) -> str:
    """`kenward-roger` or `satterthwaite` (case, `_` and spaces ignored); else StatsInputError."""
    method = ddf_method(value)
    if method is None:
        raise StatsInputError(unknown_ddf(value))
    return method


@dataclass(frozen=True)
class SlopesModel:
    """A fitted model with what contrasts need: factors, levels, coding, term columns.

    `fit` is a `mixed.MixedFit` (method `mixed`) or a `reml.RemlFit` (`lmm` keeping
    incomplete cases): contrasts only need β̂, Cov(β̂) and its derivatives.
    """

    fit: WaldFit
    factors: tuple[str, ...]
    levels: tuple[tuple[Any, ...], ...]
    cols: dict[tuple[int, ...], np.ndarray]
    slopes: tuple[tuple[int, ...], ...]
    notes: tuple[str, ...]
    random: str  # the random part, lme4 syntax
    saturated: str | None = None  # why no term is tested (re_rule step 5), or None
    #: (case, residual) variance at the identified end of the likelihood ridge
    #: (`re_rule.ridge_point`); None: the fit's own (σ²_case, σ²)
    components: tuple[float, float] | None = None
    #: σ² D of the random effects at that point (q × q), or None: `fit.random_cov()`
    cov: np.ndarray | None = None
    #: Kenward–Roger quantities (ddf `kenward-roger`); None: Satterthwaite df from `fit`
    kr: KenwardRoger | None = None
    #: terms (factor-index subsets) not tested, with the reason (`re_rule.Choice.untestable`)
    untestable: tuple[tuple[tuple[int, ...], str], ...] = ()

    def formula(self) -> str:
        """`y ~ A*B + <random part>` (slopes are numeric sum-coded columns in R)."""
        return f"y ~ {'*'.join(self.factors)} + {self.random}"


def random_part(factors: Sequence[str], slopes: Sequence[tuple[int, ...]], correlated: bool) -> str:
    """`(1 + A + B | case)`, `(1 | case) + (0 + A | case) + (0 + B | case)` (one block
    per term) or `(1 | case)`."""
    if not slopes:
        return "(1 | case)"
    if correlated:
        return f"(1 + {' + '.join(term_name(factors, s) for s in slopes)} | case)"
    return " + ".join(["(1 | case)", *(f"(0 + {term_name(factors, s)} | case)" for s in slopes)])


def term_hypothesis(levels: Sequence[Sequence[Any]], subset: tuple[int, ...], cols: np.ndarray,
                    x: np.ndarray) -> np.ndarray:
    """lmerTest's hypothesis matrix of a term (the Satterthwaite df depends on its basis).

    With several terms: the type-3 basis (`model_terms.type3_hypothesis`). With one term lmerTest
    returns its type-1 contrasts: the term's rows of Uᵀ, XᵀX = U D Uᵀ with U unit lower
    triangular (the "Doolittle" factorisation; lmerTest `get_contrasts_type1`).
    """
    if len(levels) > 1:
        return type3_hypothesis([tuple(lv) for lv in levels], subset, cols, x.shape[1])
    chol = np.linalg.cholesky(x.T @ x)
    unit = chol / np.diag(chol)[None, :]
    return np.asarray(unit.T[cols, :])


def fit_slopes_model(cm: pd.DataFrame, factors: Sequence[str], levels: Sequence[Sequence[Any]],
                     response: str, case: str, ddf: str = DDF_METHODS[0]) -> SlopesModel:
    """Fit the model to one row per (case, cell) mean; X must have full column rank."""
    x, cols = design_matrix(cm, factors, levels)
    y = cm[response].to_numpy(dtype=float)
    codes = pd.factorize(cm[case])[0]
    sums = CaseSums.from_rows(x, y, codes)
    x_cells = design_rows(factors, levels)
    kr_df = ddf == "kenward-roger"
    choice = choose_and_fit(sums, cols, len(factors), float(np.var(y, ddof=1)), x_cells,
                            with_df=not kr_df)
    sigma2, rel = ridge_point(choice.fit, x_cells)
    kr = (adjust(sums, choice.fit.structure, choice.fit.theta)
          if kr_df and not choice.saturated else None)
    return SlopesModel(choice.fit, tuple(factors), tuple(tuple(lv) for lv in levels),
                       dict(cols), choice.slopes, choice.notes,
                       random_part(factors, choice.slopes, choice.fit.structure.correlated),
                       choice.saturated, (float(sigma2 * rel[0, 0]), float(sigma2)),
                       sigma2 * rel, kr, choice.untestable)


def design_rows(factors: Sequence[str], levels: Sequence[Sequence[Any]]) -> np.ndarray:
    """The design row of every cell (all level combinations)."""
    cells = list(itertools.product(*levels))
    frame = pd.DataFrame({f: [c[j] for c in cells] for j, f in enumerate(factors)})
    return design_matrix(frame, factors, levels)[0]


def _cell_rows(model: SlopesModel, fixed: Mapping[int, int]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Design rows of every cell (level indices), restricted to `fixed` {factor: level}."""
    idx = [range(len(lv)) if j not in fixed else [fixed[j]] for j, lv in enumerate(model.levels)]
    cells = list(itertools.product(*idx))
    frame = pd.DataFrame({f: [model.levels[j][c[j]] for c in cells] for j, f in enumerate(model.factors)})
    x, _ = design_matrix(frame, model.factors, model.levels)
    return x, cells


def model_contrasts(model: SlopesModel, factor: str, correction: str = "holm", alpha: float = 0.05,
                    within: Mapping[str, object] | None = None, conf_level: float = 0.95
                    ) -> list[Contrast]:
    """Pairwise differences of marginal means of `factor` from the fitted model."""
    kind = canonical_correction(correction)
    if factor not in model.factors:
        raise StatsInputError(f"unknown factor {factor!r}; factors are {list(model.factors)}")
    j = model.factors.index(factor)
    fixed: dict[int, int] = {}
    for name, level in (within or {}).items():
        if name == factor or name not in model.factors:
            raise StatsInputError(f"`within` names {name!r}, which is not another factor")
        jj = model.factors.index(name)
        if level not in model.levels[jj]:
            raise StatsInputError(f"level {level!r} is not a level of {name!r}")
        fixed[jj] = list(model.levels[jj]).index(level)
    x, cells = _cell_rows(model, fixed)
    lv = model.levels[j]
    means = [x[[c[j] == a for c in cells]].mean(axis=0) for a in range(len(lv))]
    rows = []
    fit = model.fit
    for a in range(len(lv)):
        for b in range(a + 1, len(lv)):
            vec = means[a] - means[b]
            est = float(vec @ fit.beta)
            with np.errstate(all="ignore"):
                if model.kr is not None:
                    var, df = kr_contrast(model.kr, vec)
                else:
                    var = float(vec @ fit.cov_beta @ vec)
                    df = satterthwaite_nu(fit, vec) if var > 0 else float("nan")
            se = float(np.sqrt(var)) if var > 0 else 0.0
            df = df if se > 0 else float("nan")
            rows.append((lv[a], lv[b], est, se, df))
    with np.errstate(all="ignore"):
        t_vals = np.array([r[2] / r[3] if r[3] > 0 else np.nan for r in rows])
        dfs = np.array([r[4] for r in rows], dtype=float)
        dfs = np.where(np.isfinite(dfs) & (dfs > 0), dfs, np.nan)
        p_raw = 2.0 * t_sf(np.abs(t_vals), dfs)
        half = t_ppf(0.5 + conf_level / 2.0, dfs) * np.array([r[3] for r in rows])
    p_adj = adjust_pvalues(p_raw, kind) if rows else np.array([])
    out = []
    for k, (a, b, est, se, _df) in enumerate(rows):
        ok = bool(np.isfinite(p_raw[k]))
        out.append(Contrast(a=a, b=b, estimate=est, se=se, df=float(dfs[k]),
                            ci_low=float(est - half[k]) if ok else float("nan"),
                            ci_high=float(est + half[k]) if ok else float("nan"),
                            t=float(t_vals[k]), p_raw=float(p_raw[k]), p_adjusted=float(p_adj[k]),
                            significant=bool(ok and p_adj[k] < alpha)))
    return out


def fitted_mixed(cm: pd.DataFrame, factors: Sequence[str], levels: Sequence[Sequence[Any]],
                 response: str, case: str, ddf: str = DDF_METHODS[0]) -> AnovaResult:
    """ANOVA table of the random-slopes model on (case, cell) means; never raises on
    degenerate data: terms without a test are excluded with a reason. `ddf`: the
    denominator-df method (`DDF_METHODS`)."""
    ddf = canonical_ddf(ddf)
    keep = [j for j, lv in enumerate(levels) if len(lv) >= 2]
    kf = [factors[j] for j in keep]
    kl = [tuple(levels[j]) for j in keep]
    excluded = [ExcludedTerm(term_name(factors, s), "single level")
                for s in term_subsets(len(factors)) if any(j not in keep for j in s)]
    y = cm[response].to_numpy(dtype=float)
    n_cases = int(cm[case].nunique())
    base: dict[str, Any] = dict(method="mixed", label=mixed_label(ddf), factors=tuple(factors),
                                n_cases=n_cases,
                                levels={f: tuple(levels[j]) for j, f in enumerate(factors)})

    def all_excluded(reason: str, fit: str = "not fitted") -> AnovaResult:
        extra = [ExcludedTerm(term_name(kf, s), reason) for s in term_subsets(len(kf))]
        return AnovaResult(**base, terms={}, excluded_terms=tuple(excluded + extra),
                           case_variance=None, residual_variance=None, fit=fit)

    if not kf:
        return all_excluded("single level")
    if n_cases < 2:
        return all_excluded(REASONS[1].replace("complete ", ""))
    if too_large(y):
        return all_excluded(REASONS[6])
    ss_total = float(((y - y.mean()) ** 2).sum())
    if not ss_total > CONSTANT_REL * float(y @ y):
        return all_excluded(REASONS[2])
    x, cols = design_matrix(cm, kf, kl)
    # the rank of X is that of its distinct rows (one per cell): an SVD of a few rows,
    # not of every (case, cell) row
    if len(y) <= x.shape[1] or np.linalg.matrix_rank(x[unique_rows(x)[0]]) < x.shape[1]:
        return all_excluded("too few observations or an empty cell: the full-factorial "
                            "model is not estimable")
    try:
        # the optimiser allocates the same per-case temporaries thousands of times: keep
        # them on the heap for the fit (eval_harness/_util/malloc_trim.py); its matrices are small
        # (per case, q × q), where BLAS threads cost more to wake than they save (2 threads
        # doubled the fit's CPU time): one thread inside the fit, the caller's limits after
        with np.errstate(all="ignore"), malloc_trim.heap_phase(), \
                threadpool_limits(limits=1, user_api="blas"):
            model = fit_slopes_model(cm, kf, kl, response, case, ddf)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError) as exc:
        return all_excluded(f"the mixed model could not be fitted ({type(exc).__name__}: {exc})")
    fit = cast(MixedFit, model.fit)  # fit_slopes_model always fits a MixedFit
    if model.saturated:
        return all_excluded(f"{model.saturated} ({model.formula()})", fit=model.formula())
    case_var, resid_var = model.components or (float(fit.random_cov()[0, 0]), fit.sigma2)
    terms: dict[str, TermResult] = {}
    untestable = dict(model.untestable)
    for s in term_subsets(len(kf)):
        name = term_name(kf, s)
        if s in untestable:
            excluded.append(ExcludedTerm(name, untestable[s]))
            continue
        result = wald_term_result(name, fit, resid_var, term_hypothesis(kl, s, cols[s], x),
                                  float(cols[s].size), model.kr)
        if result is None:
            excluded.append(ExcludedTerm(name, REASONS[5]))
            continue
        terms[name] = result
    notes = (f"random effects: {model.formula()}", *model.notes)
    return AnovaResult(**base, terms=terms, excluded_terms=tuple(excluded),
                       case_variance=case_var, residual_variance=resid_var,
                       fit=f"REML {model.formula()}, {DDF_NAMES[ddf]}", notes=notes,
                       model=model)
