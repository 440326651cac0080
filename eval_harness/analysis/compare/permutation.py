"""Case-stratified paired permutation test of "no change in pass rate", standardised per case.

Data: for each case c the reference side has ``n_a`` usable attempts with ``k_a`` passes and
the candidate ``n_b`` attempts with ``k_b`` passes; N = n_a + n_b, m = k_a + k_b. Under H0
the attempts of a case are exchangeable between the two sides, so conditionally on the
margins the candidate's passes X_c are hypergeometric (Mantel & Haenszel 1959):

    E0 X_c = m·n_b / N,    Var0 X_c = n_a·n_b·m·(N − m) / (N²·(N − 1)).

Statistic: the sum over cases of the standardised changes (X_c − E0 X_c) / sd0(X_c), with
weights rounded to integers so that the exact null law lives on an integer lattice:

    Z = Σ_c w_c · U_c,   U_c = N·X_c − m·n_b = N·(X_c − E0 X_c)   (an integer),
    w_c = ⌊R·ρ_c / ρ_min + ½⌋,   ρ_c = 1 / (N·sd0(X_c)),   R = WEIGHT_RESOLUTION = 32,

ρ_min the smallest ρ over the cases with 0 < m < N (cases with m ∈ {0, N} have Var0 = 0
and contribute nothing). So w_c·U_c is proportional to the z-score of case c, the weights
rounded to ~1/R relative precision; they are computed in exact integer arithmetic from
ρ_c²/ρ_min², which is rational. The weights depend on the margins only, which every
re-split keeps, so the test is exact conditionally on the margins (Lehmann & Romano 2005,
§4.4). Standardising per stratum and summing is the scheme of van Elteren (1960) and
Stouffer et al. (1949); the stratified null law is the convolution of the per-case laws
(Good 2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, §3).

Why not the mean change in pass rate, (1/C)·Σ_c (k_b/n_b − k_a/n_a)? Each change equals
U_c/(n_a·n_b), so with equal attempt counts that statistic is a multiple of Σ_c X_c, whose
null law has about 5·C + 1 support points for 5 attempts per side: heavy ties make the
exact test conservative (measured size 0.032 at alpha 0.05 for 10 cases × 5 attempts at
p = 0.6). Tables with different margins get different weights here, which breaks most
ties (size 0.049). With one attempt per side every informative case has N = 2, m = 1,
so Z is a multiple of (#improved − #worsened): the two-sided sign test (6 one-way flips
→ 2/2⁶ = 0.03125).

Reported: ``statistic`` = the mean change in pass rate (the effect estimate), ``score`` =
Z / sd0(Z) (about N(0, 1) under H0; its sign is the direction the test saw), two-sided
p = P(|Z| ≥ |z_obs|), one-sided p_drop = P(Z ≤ z_obs).

Exact method: cases are grouped by margins (n_a, n_b, m); a group's Σ X is convolved on
a unit lattice, and the groups are combined on the lattice of g = gcd of the steps w·N
(shift-and-add for short factors, FFT for long ones: absolute error ~1e-15). When the
lattice or the work would be too large, a seeded Monte Carlo draws the hypergeometric
re-splits directly, p = (1 + #{|Z*| ≥ |z_obs|}) / (B + 1) (Phipson & Smyth 2010), in
exact integer arithmetic, seed derived from the two ids.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, reduce

import numpy as np

from eval_harness.analysis.compare.distinct_rows import unique_rows
from eval_harness.analysis.compare.fftconv import fft_convolve
from eval_harness.errors import UsageError

WEIGHT_RESOLUTION = 32  # R: the smallest weight; others are rounded to 1/R relative steps
MAX_SUPPORT = 2_000_000  # lattice points of the convolved distribution
MAX_WORK = 200_000_000  # exact whenever the estimated cost (~ns) is below this ...
MC_COST = 50  # ... or below the Monte Carlo cost: ~ns per hypergeometric draw
DIRECT_LIMIT = 1_000_000  # direct convolution below this many updates ...
DIRECT_SHORT = 64  # ... or when one factor has at most this many points
MC_CHUNK = 4_000_000  # hypergeometric draws per Monte Carlo chunk (memory bound)

Margins = tuple[int, int, int]  # (n_a, n_b, m)


@dataclass(frozen=True)
class CaseCounts:
    """Usable attempts and passes of one case on both sides."""

    n_a: int
    k_a: int
    n_b: int
    k_b: int


@dataclass(frozen=True)
class CaseArrays:
    """Counts of many cases as parallel int64 arrays: the vectorised ``list[CaseCounts]``
    (a comparison of 5,000 cases builds no per-case Python object)."""

    n_a: np.ndarray
    k_a: np.ndarray
    n_b: np.ndarray
    k_b: np.ndarray

    @classmethod
    def of(cls, cases: Sequence[CaseCounts] | CaseArrays) -> CaseArrays:
        """``cases`` as arrays (returned as is when already arrays)."""
        if isinstance(cases, CaseArrays):
            return cases
        cols = np.array([(c.n_a, c.k_a, c.n_b, c.k_b) for c in cases], dtype=np.int64)
        cols = cols.reshape(len(cases), 4)
        return cls(cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3])

    def __len__(self) -> int:
        return int(self.n_a.size)

    def take(self, mask: np.ndarray) -> CaseArrays:
        """The cases selected by a boolean mask (order kept)."""
        return CaseArrays(self.n_a[mask], self.k_a[mask], self.n_b[mask], self.k_b[mask])

    @property
    def margins(self) -> np.ndarray:
        """(cases × 3) int64 array of (n_a, n_b, m = k_a + k_b)."""
        return np.stack([self.n_a, self.n_b, self.k_a + self.k_b], axis=1)


Cases = Sequence[CaseCounts] | CaseArrays


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of the stratified permutation test."""

    statistic: float  # mean per-case change in pass proportion (candidate − reference)
    p: float  # two-sided: P(|Z| ≥ |z_obs|)
    p_drop: float  # one-sided: P(Z ≤ z_obs) (evidence the candidate is worse)
    method: str  # "exact" | "monte-carlo" | "none"
    n_permutations: int | None  # Monte Carlo draws; None when exact
    seed: int | None  # Monte Carlo seed; None when exact
    n_cases: int
    score: float = 0.0  # Z / sd0(Z): standardised test statistic (0 when nothing varies)


def seed_from_ids(a: str, b: str) -> int:
    """Reproducible 63-bit seed: the first 8 bytes of SHA-256 over UTF-8 ``"a|b"``."""
    digest = hashlib.sha256(f"{a}|{b}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _validate(cases: CaseArrays) -> None:
    bad = (cases.n_a < 1) | (cases.n_b < 1) | (cases.k_a < 0) | (cases.k_a > cases.n_a) \
        | (cases.k_b < 0) | (cases.k_b > cases.n_b)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        c = CaseCounts(*(int(x[i]) for x in (cases.n_a, cases.k_a, cases.n_b, cases.k_b)))
        raise UsageError(f"permutation test: invalid case counts {c}")


def _live(cases: CaseArrays) -> CaseArrays:
    """Cases whose pooled attempts are not all-pass or all-fail (Var0 > 0)."""
    m = cases.k_a + cases.k_b
    return cases.take((m > 0) & (m < cases.n_a + cases.n_b))


def _margin_groups(live: CaseArrays) -> tuple[list[Margins], np.ndarray, np.ndarray]:
    """Distinct margins (n_a, n_b, m), each case's group number, and the group sizes."""
    rows, inverse = unique_rows(live.n_a, live.n_b, live.k_a + live.k_b)
    keys = [(a, b, m) for a, b, m in rows]
    return keys, inverse, np.bincount(inverse, minlength=len(keys))


def _rho_squared(t: Margins) -> Fraction:
    """ρ² = 1 / (N²·Var0 X) = (N − 1) / (n_a·n_b·m·(N − m)), exactly."""
    n_a, n_b, m = t
    total = n_a + n_b
    return Fraction(total - 1, n_a * n_b * m * (total - m))


def integer_weights(margins: Sequence[Margins]) -> dict[Margins, int]:
    """w = ⌊R·ρ/ρ_min + ½⌋ for each distinct informative margin triple, in exact arithmetic.

    ⌊√y + ½⌋ = (⌊√(4y)⌋ + 1) // 2 and ⌊√⌊x⌋⌋ = ⌊√x⌋, so with y = R²·ρ²/ρ_min² = a/b the
    weight is ``(isqrt(4·a // b) + 1) // 2`` — no floating point, same on every platform.
    """
    if not margins:
        return {}
    rho2 = {t: _rho_squared(t) for t in set(margins)}
    low = min(rho2.values())
    out = {}
    for t, r2 in rho2.items():
        y = r2 / low * WEIGHT_RESOLUTION**2
        out[t] = (math.isqrt(4 * y.numerator // y.denominator) + 1) // 2
    return out


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


@dataclass(frozen=True)
class _Plan:
    groups: list[tuple[Margins, int]]  # (margins, number of cases), combination order
    weights: dict[Margins, int]
    gcd: int
    size: int  # lattice points of the final distribution
    work: float  # estimated element operations


def _direct(a: int, b: int) -> bool:
    return a * b <= DIRECT_LIMIT or min(a, b) <= DIRECT_SHORT


def _conv_cost(a: int, b: int, stride: int) -> float:
    """Cost of convolving ``a`` points with ``b`` points spread ``stride`` apart."""
    n = a + (b - 1) * stride
    if _direct(a, b):
        return float(a * b) * (1 if n <= 100_000 else 4)  # long arrays leave the cache
    return 8.0 * n * math.log2(n + 1)


def _plan(live: CaseArrays) -> _Plan:
    keys, _, sizes = _margin_groups(live)
    counts = {t: int(k) for t, k in zip(keys, sizes, strict=True)}
    weights = integer_weights(list(counts))
    steps = {t: weights[t] * (t[0] + t[1]) for t in counts}
    g = reduce(math.gcd, steps.values(), 0) or 1
    width = {t: min(t[2], t[1]) - max(0, t[2] - t[0]) for t in counts}
    # Narrowest groups first: the running array stays short for as long as possible.
    groups = sorted(counts.items(), key=lambda tk: (tk[1] * width[tk[0]] * steps[tk[0]], tk[0]))
    size, work = 1, 0.0
    for t, k in groups:
        span = k * width[t] + 1
        work += 2 * k.bit_length() * _conv_cost(span, span, 1)  # the group's Σ X (bound)
        work += _conv_cost(size, span, steps[t] // g)
        size += (span - 1) * steps[t] // g
    return _Plan(groups, weights, g, size, work)


def _feasible(plan: _Plan, n_live: int, n_permutations: int) -> bool:
    cheap = plan.work <= max(MAX_WORK, MC_COST * n_live * n_permutations)
    return plan.size <= MAX_SUPPORT and cheap


def exact_feasible(cases: Cases, n_permutations: int = 20_000) -> bool:
    """Whether the lattice has at most ``MAX_SUPPORT`` points and the exact convolution is
    estimated to cost less than ``MAX_WORK`` or than ``n_permutations`` Monte Carlo draws."""
    live = _live(CaseArrays.of(cases))
    return not len(live) or _feasible(_plan(live), len(live), n_permutations)


def _convolve(a: np.ndarray, b: np.ndarray, stride: int = 1) -> np.ndarray:
    """Law of A + stride·B for independent lattice variables with pmfs ``a`` and ``b``."""
    if _direct(a.size, b.size):
        if stride == 1:
            return np.convolve(a, b)
        out = np.zeros(a.size + (b.size - 1) * stride)
        if b.size <= a.size:  # loop over the shorter factor
            for j, w in enumerate(b):
                out[j * stride : j * stride + a.size] += w * a
        else:
            for i, w in enumerate(a):
                out[i : i + (b.size - 1) * stride + 1 : stride] += w * b
        return out
    spread = np.zeros((b.size - 1) * stride + 1)
    spread[::stride] = b
    # FFT leaves ~1e-17 noise, sometimes negative: clip so tail sums stay monotone.
    return np.clip(fft_convolve(a, spread), 0.0, None)


def _group_sum(pmf: np.ndarray, k: int) -> np.ndarray:
    """pmf of the sum of ``k`` independent copies (binary powering)."""
    result, power = np.ones(1), pmf
    while k:
        if k & 1:
            result = _convolve(result, power)
        k >>= 1
        if k:
            power = _convolve(power, power)
    return result


def _statistic(live: CaseArrays, weights: dict[Margins, int]) -> int:
    """z_obs = Σ_c w_c·U_c, summed per margin group in int64 and combined as Python ints
    (exact: the weights can be large)."""
    keys, inverse, _ = _margin_groups(live)
    u = (live.n_a + live.n_b) * live.k_b - (live.k_a + live.k_b) * live.n_b
    per_group = np.zeros(len(keys), dtype=np.int64)
    np.add.at(per_group, inverse, u)
    return sum(weights[t] * int(s) for t, s in zip(keys, per_group, strict=True))


def _null_sd(plan: _Plan) -> float:
    """sd0(Z) = √Σ w²·N²·Var0 X = √Σ w²·n_a·n_b·m·(N − m)/(N − 1)."""
    return math.sqrt(sum(k * plan.weights[t] ** 2 / _rho_squared(t) for t, k in plan.groups))


@dataclass(frozen=True)
class NullLaw:
    """Exact conditional null law of Z on its lattice, and the observed Z."""

    values: np.ndarray  # int64, increasing, step = gcd of the per-case steps
    probs: np.ndarray  # P(Z = value)
    observed: int


def _null_law(live: CaseArrays, plan: _Plan) -> NullLaw:
    dist = np.ones(1)
    offset = 0  # value of Z at dist[0]
    for t, k in plan.groups:
        n_a, n_b, m = t
        lo, pmf = _hypergeom_pmf(n_a, n_b, m)
        w, total = plan.weights[t], n_a + n_b
        dist = _convolve(dist, _group_sum(pmf, k), w * total // plan.gcd)
        offset += w * k * (total * lo - m * n_b)  # Z at Σ X = k·lo
    values = offset + plan.gcd * np.arange(dist.size, dtype=np.int64)  # exact integers
    return NullLaw(values, dist, _statistic(live, plan.weights))


def exact_null_distribution(cases: Cases) -> NullLaw:
    """The exact null law of Z given the margins of ``cases`` (ignores feasibility limits)."""
    arrays = CaseArrays.of(cases)
    _validate(arrays)
    live = _live(arrays)
    if not len(live):
        return NullLaw(np.zeros(1, dtype=np.int64), np.ones(1), 0)
    return _null_law(live, _plan(live))


def _exact(law: NullLaw) -> tuple[float, float]:
    z_obs = law.observed
    # At z_obs = 0 every outcome is as extreme: exactly 1 (the sum would carry rounding).
    p_two = 1.0 if z_obs == 0 else float(law.probs[np.abs(law.values) >= abs(z_obs)].sum())
    p_drop = float(law.probs[law.values <= z_obs].sum())
    return min(1.0, p_two), min(1.0, p_drop)


def _monte_carlo(
    live: CaseArrays, weights: dict[Margins, int], z_obs: int, n_perm: int, seed: int
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    n_a, n_b, m = live.n_a, live.n_b, live.k_a + live.k_b
    keys, inverse, _ = _margin_groups(live)
    w = np.array([weights[t] for t in keys], dtype=np.int64)[inverse]
    n_cases = len(live)
    hits_two = hits_drop = 0
    chunk = max(1, MC_CHUNK // n_cases)
    done = 0
    while done < n_perm:
        size = min(chunk, n_perm - done)
        x = rng.hypergeometric(m, n_a + n_b - m, n_b, size=(size, n_cases))
        z = ((n_a + n_b) * x - m * n_b) @ w  # integers: ties are exact
        hits_two += int(np.count_nonzero(np.abs(z) >= abs(z_obs)))
        hits_drop += int(np.count_nonzero(z <= z_obs))
        done += size
    return (1 + hits_two) / (n_perm + 1), (1 + hits_drop) / (n_perm + 1)


def stratified_permutation_test(
    cases: Cases,
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
    arrays = CaseArrays.of(cases)
    _validate(arrays)
    n_cases = len(arrays)
    if n_cases == 0:
        return PermutationResult(0.0, 1.0, 1.0, "none", None, None, 0)
    t_obs = float(np.mean(arrays.k_b / arrays.n_b - arrays.k_a / arrays.n_a))
    live = _live(arrays)
    if not len(live):  # nothing can move under any re-split
        return PermutationResult(t_obs, 1.0, 1.0, "exact", None, None, n_cases)
    plan = _plan(live)
    z_obs = _statistic(live, plan.weights)
    score = z_obs / _null_sd(plan)
    feasible = _feasible(plan, len(live), n_permutations)
    if method == "exact" or (method == "auto" and feasible):
        p_two, p_drop = _exact(_null_law(live, plan))
        return PermutationResult(t_obs, p_two, p_drop, "exact", None, None, n_cases, score)
    p_two, p_drop = _monte_carlo(live, plan.weights, z_obs, n_permutations, seed)
    return PermutationResult(
        t_obs, p_two, p_drop, "monte-carlo", n_permutations, seed, n_cases, score
    )
