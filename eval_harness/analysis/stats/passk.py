"""pass@k and pass^k: the chance that at least one / all of k attempts pass.

For one case with n usable attempts of which c passed (n ≥ k), drawing k of the n
attempts without replacement gives the unbiased estimators

    pass@k = 1 − C(n − c, k) / C(n, k)      (Chen et al. 2021, "Evaluating Large Language
                                             Models Trained on Code", eq. 1)
    pass^k = C(c, k) / C(n, k)              (its all-k analogue, the τ-bench reliability
                                             metric: Yao et al. 2024, "τ-bench")

Both are unbiased for the case's 1 − (1 − p)^k and p^k where p is its true pass
probability (the plug-in 1 − (1 − c/n)^k is biased). A condition's value is the mean over
its cases with n ≥ k (cases with fewer usable attempts — some errored — are left out and
counted). k = 1 gives the mean per-case pass rate for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import comb
from typing import Any


@lru_cache(maxsize=4096)
def pass_at_k(n: int, c: int, k: int) -> float:
    """1 − C(n−c, k)/C(n, k) for 0 ≤ c ≤ n, 1 ≤ k ≤ n (exact integer binomials)."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


@lru_cache(maxsize=4096)
def pass_hat_k(n: int, c: int, k: int) -> float:
    """C(c, k)/C(n, k) for 0 ≤ c ≤ n, 1 ≤ k ≤ n."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


def condition_pass_k(n: Sequence[int], c: Sequence[int], k_max: int) -> dict[str, Any]:
    """Per-k means over cases with n ≥ k: ``{"k": [1..], "pass_at_k": [..], "pass_hat_k":
    [..], "n_cases": [..]}`` (None where no case has k usable attempts)."""
    pairs = [(int(a), int(b)) for a, b in zip(n, c, strict=True)]
    out: dict[str, Any] = {"k": [], "pass_at_k": [], "pass_hat_k": [], "n_cases": []}
    for k in range(1, k_max + 1):
        usable = [(a, b) for a, b in pairs if a >= k]
        out["k"].append(k)
        out["n_cases"].append(len(usable))
        if usable:
            out["pass_at_k"].append(sum(pass_at_k(a, b, k) for a, b in usable) / len(usable))
            out["pass_hat_k"].append(sum(pass_hat_k(a, b, k) for a, b in usable) / len(usable))
        else:
            out["pass_at_k"].append(None)
            out["pass_hat_k"].append(None)
    return out


def case_pass_k(n: int, c: int, k_max: int) -> dict[str, list[float | None]]:
    """One case's ``{"pass_at_k": [...], "pass_hat_k": [...]}`` for k = 1..k_max (None for
    k > n)."""
    ks = range(1, k_max + 1)
    return {"pass_at_k": [pass_at_k(n, c, k) if k <= n else None for k in ks],
            "pass_hat_k": [pass_hat_k(n, c, k) if k <= n else None for k in ks]}
