"""Fisher exact test on large counts (≥ 10,000 attempts per side): log space, no overflow.

Reference: R 4.2.2 `fisher.test`, the call quoted beside each value.
"""

from __future__ import annotations

import time

import pytest

from eval_harness.analysis.compare.fisher import fisher_exact_two_sided


@pytest.mark.parametrize(
    ("a", "an", "b", "bn", "p"),
    [
        # fisher.test(matrix(c(5000, 5000, 4800, 5200), 2))$p.value
        (5000, 10000, 4800, 10000, 0.004878795768906826),
        # fisher.test(matrix(c(10000, 0, 9990, 10), 2))$p.value
        (10000, 10000, 9990, 10000, 0.001948733325030237),
        # fisher.test(matrix(c(12000, 8000, 11850, 8150), 2))$p.value
        (12000, 20000, 11850, 20000, 0.128912731218749854),
        # fisher.test(matrix(c(3, 9997, 20, 9980), 2))$p.value
        (3, 10000, 20, 10000, 0.000484911268059875),
        # fisher.test(matrix(c(5000, 5000, 5000, 5000), 2))$p.value
        (5000, 10000, 5000, 10000, 1.0),
    ],
)
def test_large_counts_match_r(a: int, an: int, b: int, bn: int, p: float) -> None:
    assert fisher_exact_two_sided(a, an, b, bn) == pytest.approx(p, rel=1e-7)
    assert fisher_exact_two_sided(b, bn, a, an) == pytest.approx(p, rel=1e-7)


def test_very_large_counts_are_fast_and_finite() -> None:
    t0 = time.perf_counter()
    p = fisher_exact_two_sided(400_000, 1_000_000, 399_000, 1_000_000)
    assert 0.0 <= p <= 1.0 and time.perf_counter() - t0 < 2.0
    assert fisher_exact_two_sided(1_000_000, 1_000_000, 0, 1_000_000) == 0.0
