"""Case-stratified paired permutation test on the mean per-case change in pass rate.

Data: for each case i, the reference side has ``n_a`` usable attempts with ``k_a`` passes and
the candidate ``n_b`` attempts with ``k_b`` passes. The statistic is

    T = (1/C) · Σ_i (k_b,i / n_b,i − k_a,i / n_a,i)

(mean over the C cases of the change in pass proportion). Under H0 the attempts of a case are
exchangeable between the two sides, so the null distribution re-splits the pooled attempts of
each case independently: the candidate's passes X_i follow a hypergeometric law
(N_i = n_a + n_b attempts, m_i = k_a + k_b passes, n_b drawn). Cases are independent, so the
null law of Σ d_i is the convolution of the per-case laws. Good (2005), *Permutation,
Parametric and Bootstrap Tests of Hypotheses*, §3 (stratified designs).

Exact method: every d_i is put on one integer lattice (multiples of 1/L with L the lcm of
all n), divided by the gcd of the per-case steps, and the per-case probability mass
functions are convolved by shift-and-add. The two-sided p is P(|T| ≥ |t_obs|) — with one
attempt per side this reduces to the two-sided sign test on discordant cases (6 one-way flips
→ 2/2⁶ = 0.03125). When the lattice would be too large (very unequal attempt counts over many
cases) a seeded Monte Carlo fallback draws the hypergeometric re-splits directly, p =
(1 + #{|T*| ≥ |t_obs|}) / (B + 1) (Phipson & Smyth 2010), seed derived from the two ids.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce

import numpy as np

from eval_harness.errors import UsageError

MAX_SUPPORT = 2_000_000  # lattice points of the convolved distribution
MAX_WORK = 200_000_000  # element updates across the whole convolution (~0.3 s)
MC_CHUNK = 4_000_000  # hypergeometric draws per Monte Carlo chunk (memory bound)


@dataclass(frozen=True)
class CaseCounts:
    """Usable attempts and passes of one case on both sides."""

    n_a: int
    k_a: int
    n_b: int
    k_b: int


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of the stratified permutation test."""

    statistic: float  # mean per-case change in pass proportion (candidate − reference)
    p: float  # two-sided: P(|T| ≥ |t_obs|)
    p_drop: float  # one-sided: P(T ≤ t_obs) (evidence the candidate is worse)
    method: str  # "exact" | "monte-carlo" | "none"
    n_permutations: int | None  # Monte Carlo draws; None when exact
    seed: int | None  # Monte Carlo seed; None when exact
    n_cases: int


def seed_from_ids(a: str, b: str) -> int:
    """Reproducible 63-bit seed: the first 8 bytes of SHA-256 over UTF-8 ``"a|b"``."""
    digest = hashlib.sha256(f"{a}|{b}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _validate(cases: Sequence[CaseCounts]) -> None:
    for c in cases:
        if c.n_a < 1 or c.n_b < 1 or not 0 <= c.k_a <= c.n_a or not 0 <= c.k_b <= c.n_b:
            raise UsageError(f"permutation test: invalid case counts {c}")


@lru_cache(maxsize=8192)
def _hypergeom_pmf(n_a: int, n_b: int, m: int) -> tuple[int, np.ndarray]:
    """Support start and pmf of X = candidate passes when ``m`` passes of ``n_a+n_b`` are re-split."""
    total = n_a + n_b
    lo, hi = max(0, m - n_a), min(m, n_b)
    denom = math.comb(total, n_b)
    pmf = np.array(
        [math.comb(m, x) * math.comb(total - m, n_b - x) / denom for x in range(lo, hi + 1)]
    )
    return lo, pmf


def _lattice(cases: Sequence[CaseCounts]) -> tuple[int, list[int], int]:
    """Integer lattice: L (common denominator), per-case steps in units of 1/L, their gcd."""
    big_l = reduce(math.lcm, [c.n_a for c in cases] + [c.n_b for c in cases], 1)
    steps = [big_l // c.n_b + big_l // c.n_a for c in cases]
    g = reduce(math.gcd, steps, 0) or 1
    return big_l, steps, g


def exact_feasible(cases: Sequence[CaseCounts]) -> bool:
    """Whether exact convolution stays within ``MAX_SUPPORT`` points and ``MAX_WORK`` updates."""
    live = [c for c in cases if 0 < c.k_a + c.k_b < c.n_a + c.n_b]
    if not live:
        return True
    _, steps, g = _lattice(live)
    size, work = 1, 0
    for c, step in zip(live, steps, strict=True):
        m = c.k_a + c.k_b
        width = min(m, c.n_b) - max(0, m - c.n_a)
        size += width * step // g
        work += (width + 1) * size
        if size > MAX_SUPPORT or work > MAX_WORK:
            return False
    return True


def _exact(cases: Sequence[CaseCounts]) -> tuple[float, float]:
    # Degenerate cases (all pass or all fail) always contribute d_i = 0: skip them.
    live = [c for c in cases if 0 < c.k_a + c.k_b < c.n_a + c.n_b]
    if not live:
        return 1.0, 1.0
    big_l, steps, g = _lattice(live)
    dist = np.ones(1)
    offset = 0  # lattice value (in units of 1/L) of dist[0]
    obs = 0  # observed Σ d_i in units of 1/L
    # Largest steps first keeps early arrays short; the result does not depend on order.
    for c, step in sorted(zip(live, steps, strict=True), key=lambda cs: -cs[1]):
        m = c.k_a + c.k_b
        lo, pmf = _hypergeom_pmf(c.n_a, c.n_b, m)
        shift = step // g
        new = np.zeros(dist.size + (pmf.size - 1) * shift)
        for j, w in enumerate(pmf):
            new[j * shift : j * shift + dist.size] += w * dist
        dist = new
        # d = x·(L/n_b + L/n_a) − m·L/n_a, at x = lo for index 0.
        offset += lo * step - m * (big_l // c.n_a)
        obs += c.k_b * (big_l // c.n_b) - c.k_a * (big_l // c.n_a)
    values = offset + g * np.arange(dist.size, dtype=np.int64)  # exact integers
    # At obs = 0 every outcome is as extreme: exactly 1 (the sum would carry rounding).
    p_two = 1.0 if obs == 0 else float(dist[np.abs(values) >= abs(obs)].sum())
    p_drop = float(dist[values <= obs].sum())
    return min(1.0, p_two), min(1.0, p_drop)


def _monte_carlo(
    cases: Sequence[CaseCounts], t_obs: float, n_perm: int, seed: int
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    n_a = np.array([c.n_a for c in cases])
    n_b = np.array([c.n_b for c in cases])
    m = np.array([c.k_a + c.k_b for c in cases])
    n_cases = len(cases)
    tol = 1e-9 * max(1.0, abs(t_obs))  # floating ties count as "as extreme"
    hits_two = hits_drop = 0
    chunk = max(1, MC_CHUNK // max(1, n_cases))
    done = 0
    while done < n_perm:
        size = min(chunk, n_perm - done)
        x = rng.hypergeometric(m, n_a + n_b - m, n_b, size=(size, n_cases))
        t = ((x / n_b) - ((m - x) / n_a)).mean(axis=1)
        hits_two += int(np.count_nonzero(np.abs(t) >= abs(t_obs) - tol))
        hits_drop += int(np.count_nonzero(t <= t_obs + tol))
        done += size
    return (1 + hits_two) / (n_perm + 1), (1 + hits_drop) / (n_perm + 1)


def stratified_permutation_test(
    cases: Sequence[CaseCounts],
    *,
    seed: int = 0,
    n_permutations: int = 20_000,
    method: str = "auto",
) -> PermutationResult:
    """Test H0 "no change in pass rate" across cases (see module docstring).

    ``method``: "auto" (exact when feasible, else Monte Carlo), "exact" or "monte-carlo".
    With no cases the result has ``method="none"`` and p = 1.
    """
    if method not in ("auto", "exact", "monte-carlo"):
        raise UsageError(f"permutation test: unknown method {method!r}")
    if n_permutations < 1:
        raise UsageError("permutation test: n_permutations must be >= 1")
    _validate(cases)
    n_cases = len(cases)
    if n_cases == 0:
        return PermutationResult(0.0, 1.0, 1.0, "none", None, None, 0)
    t_obs = float(np.mean([c.k_b / c.n_b - c.k_a / c.n_a for c in cases]))
    use_exact = method == "exact" or (method == "auto" and exact_feasible(cases))
    if use_exact:
        p_two, p_drop = _exact(cases)
        return PermutationResult(t_obs, p_two, p_drop, "exact", None, None, n_cases)
    p_two, p_drop = _monte_carlo(cases, t_obs, n_permutations, seed)
    return PermutationResult(t_obs, p_two, p_drop, "monte-carlo", n_permutations, seed, n_cases)
