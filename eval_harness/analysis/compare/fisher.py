"""Two-sided Fisher exact test for a 2×2 table of passes and failures.

Table ``[[a_pass, a_fail], [b_pass, b_fail]]``. Conditional on the margins, the passes of
side A follow a hypergeometric law; the two-sided p sums the probabilities of every table
no more likely than the observed one (with R's relative tolerance 1e-7, so ties computed
with rounding residue are counted), as R ``fisher.test(matrix(c(...), 2))$p.value`` does.
Fisher (1935), *The Design of Experiments*; Agresti (2002) §3.5.

Probabilities are computed with exact integer binomial coefficients, so there is no
floating cancellation even for very unequal tables.
"""

from __future__ import annotations

import math
from functools import lru_cache

from eval_harness.errors import UsageError

_REL_TOL = 1e-7  # R: relErr <- 1 + 10^(-7)


@lru_cache(maxsize=4096)
def _fisher_cached(a_pass: int, a_n: int, b_pass: int, b_n: int) -> float:
    m = a_pass + b_pass  # total passes (fixed margin)
    total = a_n + b_n
    lo, hi = max(0, m - b_n), min(m, a_n)
    denom = math.comb(total, a_n)
    weights = [math.comb(m, x) * math.comb(total - m, a_n - x) for x in range(lo, hi + 1)]
    observed = weights[a_pass - lo]
    # Integer weights: compare exactly, then apply R's tolerance for parity with fisher.test.
    cutoff = observed * (1.0 + _REL_TOL)
    tail = sum(w for w in weights if w <= cutoff)
    return min(1.0, tail / denom)


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
