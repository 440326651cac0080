"""The terms of a full-factorial model: its `contr.sum` design matrix, a term's type-3
hypothesis matrix and the Wald F test of a term of a fitted model (used by the random-
intercept fit in `frame` and the random-slopes fit in `slopes`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.stats.design import contr_sum, term_subsets
from eval_harness.analysis.stats.dist import f_sf
from eval_harness.analysis.stats.kenward_roger import KenwardRoger, kr_term
from eval_harness.analysis.stats.reml import WaldFit, wald_term
from eval_harness.analysis.stats.results import TermResult


def wald_term_result(name: str, fit: WaldFit, sigma2: float, hyp: np.ndarray,
                     q: float, kr: KenwardRoger | None = None) -> TermResult | None:
    """Wald F test of one term of a fitted model, or None when F, p or df is not finite.

    F and the df: Kenward–Roger (`kenward_roger.kr_term`) when `kr` is given, else the
    Satterthwaite df of `reml.wald_term`; p = P(F_{q, ddf} > F); the sums of squares are
    implied by the fit, SS = F·q·σ², SS_error = σ²·ddf, and partial η² = F·q / (F·q + ddf).
    """
    with np.errstate(all="ignore"):
        f_val, ddf = kr_term(kr, hyp) if kr is not None else wald_term(fit, hyp)
        p = float(f_sf(f_val, q, ddf))
    if not (np.isfinite(f_val) and np.isfinite(p) and ddf > 0):
        return None
    ss = f_val * q * sigma2
    return TermResult(
        term=name, F=f_val, df_num=q, df_den=ddf, p_uncorrected=p, p_raw=p, gg_epsilon=None,
        partial_eta_sq=f_val * q / (f_val * q + ddf), ss=ss, ss_error=sigma2 * ddf,
        ms=ss / q, ms_error=sigma2)


def design_matrix(
    cm: pd.DataFrame, factors: Sequence[str], levels: Sequence[Sequence[Any]]
) -> tuple[np.ndarray, dict[tuple[int, ...], np.ndarray]]:
    """Full-factorial `contr.sum` design; column indices of each term."""
    coded = []
    for f, lv in zip(factors, levels, strict=True):
        codes = pd.Categorical(cm[f], categories=list(lv)).codes
        coded.append(contr_sum(len(lv))[codes])
    blocks = [np.ones((len(cm), 1))]
    cols: dict[tuple[int, ...], np.ndarray] = {}
    start = 1
    for subset in term_subsets(len(factors)):
        block = np.ones((len(cm), 1))
        for j in subset:
            block = np.einsum("ra,rb->rab", block, coded[j]).reshape(len(cm), -1)
        blocks.append(block)
        cols[subset] = np.arange(start, start + block.shape[1])
        start += block.shape[1]
    return np.hstack(blocks), cols


def type3_hypothesis(
    levels: Sequence[tuple[Any, ...]], subset: Sequence[int], cols: np.ndarray, n_params: int
) -> np.ndarray:
    """Type-3 hypothesis matrix of a term, in lmerTest's basis.

    Rows are the term's treatment-style contrasts (each level against the first, and
    their products for interactions) written in the `contr.sum` coefficients:
    L_T = ⊗_{f∈T} (D_f · contr.sum(L_f)), D_f with rows e_l − e_1 (l = 2..L_f).
    """
    block = np.ones((1, 1))
    for j in subset:
        n_lv = len(levels[j])
        diff = np.hstack([-np.ones((n_lv - 1, 1)), np.eye(n_lv - 1)])
        block = np.kron(block, diff @ contr_sum(n_lv))
    hyp = np.zeros((block.shape[0], n_params))
    hyp[:, cols] = block
    return hyp
