"""Two-sided Fisher exact test for a 2×2 table of passes and failures.

Table ``[[a_pass, a_fail], [b_pass, b_fail]]``. Conditional on the margins, the passes of
side A follow a hypergeometric law; the two-sided p sums the probabilities of every table
no more likely than the observed one (with R's relative tolerance 1e-7, so ties computed
with rounding residue are counted), as R ``fisher.test(matrix(c(...), 2))$p.value`` does.
Fisher (1935), *The Design of Experiments*; Agresti (2002) §3.5.

The probabilities are handled in log space, as R does (``dhyper(..., log = TRUE)``, then
scaled by the most likely table before exponentiating): exact binomial coefficients of
10,000 attempts per side have ~6,000 digits and overflow a float.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from eval_harness.errors import UsageError

_REL_TOL = 1e-7  # R: relErr <- 1 + 10^(-7)


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


@lru_cache(maxsize=4096)
def _fisher_cached(a_pass: int, a_n: int, b_pass: int, b_n: int) -> float:
    m = a_pass + b_pass  # total passes (fixed margin)
    total = a_n + b_n
    lo, hi = max(0, m - b_n), min(m, a_n)
    support = np.arange(lo, hi + 1, dtype=float)
    # log P(X = x) up to the constant −log C(total, a_n), which cancels after normalising
    logw = _log_comb(m, support) + _log_comb(total - m, a_n - support)
    w = np.exp(logw - logw.max())
    observed = w[a_pass - lo]
    tail = float(w[w <= observed * (1.0 + _REL_TOL)].sum())
    return min(1.0, tail / float(w.sum()))


def fisher_exact_two_sided(a_pass: int, a_n: int, b_pass: int, b_n: int) -> float:
    """Two-sided Fisher exact p for ``a_pass``/``a_n`` versus ``b_pass``/``b_n``.

    Returns 1.0 when either side has no trials (nothing to test).
    """
    for name, k, n in (("a", a_pass, a_n), ("b", b_pass, b_n)):
        if n < 0 or k < 0 or k > n:
            raise UsageError(f"fisher_exact_two_sided: need 0 <= {name}_pass <= {name}_n")
    if a_n == 0 or b_n == 0:
        return 1.0
    return _fisher_cached(int(a_pass), int(a_n), int(b_pass), int(b_n))
