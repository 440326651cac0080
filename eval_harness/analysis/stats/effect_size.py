"""Generalized eta squared (Olejnik & Algina 2003; Bakeman 2005), as R afex's ``ges``.

Every factor is manipulated within case (each case sees every condition), so case is the
only "subject" stratum. On the complete cases (cases × cells array, see sums.py):

    η²_G(T) = SS_T / (SS_T + SS_case + Σ_U SS_U×case)

the sum over *every* term U's error stratum. Unlike partial η² (SS_T / (SS_T + SS_error of
T's own test)), the denominator is the same whatever the error term a method uses, so the
number compares across methods (rm, lmm, mixed) and across designs with the same factors.
Under ``lmm`` / ``mixed`` partial η² is F·df₁ / (F·df₁ + df₂) on the model's pooled error
(Kenward–Roger or Satterthwaite df₂ for ``mixed``), which is much smaller than rm's when cases react
differently to a factor; η²_G is computed from the same complete-case sums under every
method. References: Olejnik & Algina (2003), Psychological Methods 8:434–447; Bakeman
(2005), Behavior Research Methods 37:379–384; afex ``aov_ez(..., anova_table = list(es =
"ges"))``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from eval_harness.analysis.stats.design import term_name
from eval_harness.analysis.stats.sums import design_sums

#: which error term partial η² uses, per method (reported beside it)
PARTIAL_ETA_ERROR = {
    "rm": "term × case stratum of the term (SS_T / (SS_T + SS_T×case))",
    "lmm": "pooled residual of the random-intercept model (F·df1 / (F·df1 + df2))",
    "mixed": "random-slopes model, its denominator df2 (method.label) (F·df1 / (F·df1 + df2))",
}


def generalized_eta_squared(y: np.ndarray, factors: Sequence[str]) -> dict[str, float]:
    """η²_G of every term of a complete cases × L1 × ... × Lk array (module docstring);
    empty with fewer than 2 cases or no factor; NaN when the denominator is 0."""
    arr = np.asarray(y, dtype=float)
    k = len(factors)
    if k == 0 or arr.ndim != k + 1 or arr.shape[0] < 2 or not np.isfinite(arr).all():
        return {}
    sums = design_sums(arr, k)
    errors = float(sums.ss_case) + sum(float(t.ss_error) for t in sums.terms)
    out = {}
    for t in sums.terms:
        ss = float(t.ss)
        den = ss + errors
        out[term_name(list(factors), t.subset)] = ss / den if den > 0 else float("nan")
    return out
