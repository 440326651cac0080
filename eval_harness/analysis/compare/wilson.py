"""Wilson score interval for a binomial proportion.

For k successes in n trials, p̂ = k/n and z = Φ⁻¹(1 − (1 − level)/2):

    centre = (p̂ + z²/(2n)) / (1 + z²/n)
    half   = z · √(p̂(1 − p̂)/n + z²/(4n²)) / (1 + z²/n)

Wilson (1927), "Probable inference, the law of succession, and statistical inference",
JASA 22:209. Same as R ``prop.test(k, n, correct = FALSE)$conf.int``. Unlike the Wald
interval it stays inside [0, 1] and is not degenerate at k = 0 or k = n.
"""

from __future__ import annotations

import math
from functools import lru_cache

from eval_harness.errors import UsageError


@lru_cache(maxsize=64)
def _z(level: float) -> float:
    """z = Φ⁻¹(1 − (1 − level)/2), computed once per level."""
    from eval_harness.analysis.stats.dist import norm_ppf  # numpy + scipy.special: when used

    return float(norm_ppf(1.0 - (1.0 - level) / 2.0))


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes out of ``n`` trials.

    Returns ``(nan, nan)`` when ``n == 0`` (no information). Bounds are clipped to [0, 1]
    and snapped to exactly 0 / 1 at k = 0 / k = n (rounding residue otherwise).
    """
    if n < 0 or k < 0 or k > n:
        raise UsageError(f"wilson_interval: need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < level < 1.0:
        raise UsageError(f"wilson_interval: level must be in (0, 1), got {level}")
    if n == 0:
        return (math.nan, math.nan)
    z = _z(float(level))
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)
