"""Timing of the stratified permutation test (prints numbers; no assertions).

Run: python3 bench/bench_permutation.py
"""

from __future__ import annotations

import time

import numpy as np

from eval_harness.analysis.compare.permutation import CaseCounts, stratified_permutation_test


def _time(label: str, cases: list[CaseCounts], repeat: int = 3) -> None:
    best = float("inf")
    method = ""
    for _ in range(repeat):
        start = time.perf_counter()
        method = stratified_permutation_test(cases, seed=1).method
        best = min(best, time.perf_counter() - start)
    print(f"{label:<45} {method:<12} {best * 1e3:9.2f} ms")


def main() -> None:
    rng = np.random.default_rng(0)
    sizes = ((10, 5), (30, 5), (100, 5), (300, 5), (1_000, 5), (3_000, 5), (1_000, 1), (200, 20))
    for n_cases, n in sizes:
        ks = rng.integers(0, n + 1, size=(n_cases, 2))
        _time(f"{n_cases} cases x {n} attempts", [CaseCounts(n, int(a), n, int(b)) for a, b in ks])
    mixed = []
    for _ in range(300):
        n_a, n_b = (int(x) for x in rng.integers(1, 14, size=2))
        mixed.append(
            CaseCounts(n_a, int(rng.integers(0, n_a + 1)), n_b, int(rng.integers(0, n_b + 1)))
        )
    _time("300 cases, unequal attempts (1..13)", mixed, repeat=1)
    _time("30 cases, unequal attempts (1..13)", mixed[:30])


if __name__ == "__main__":
    main()
