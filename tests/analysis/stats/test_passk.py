"""pass@k / pass^k: the closed form on every small case, unbiasedness by enumeration, and a
simulation of the estimators' means."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from eval_harness.analysis.stats.passk import (
    case_pass_k,
    condition_pass_k,
    pass_at_k,
    pass_hat_k,
)


@pytest.mark.parametrize(("c", "k"), list(itertools.product(range(6), range(1, 6))))
def test_closed_form_n5(c: int, k: int) -> None:
    n = 5
    # 1 - C(n-c, k)/C(n, k), and C(c, k)/C(n, k), written out by hand
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
    assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k))
    # ...and as the share of the C(n, k) k-subsets of attempts with >= 1 / only passes
    attempts = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(attempts, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_known_values() -> None:
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0  # n - c < k
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)   # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)  # C(3,2)/C(5,2) = 3/10
    assert pass_at_k(4, 1, 1) == pass_hat_k(4, 1, 1) == 0.25  # k = 1: the pass rate
    for bad in ((3, 4, 1), (3, 1, 0), (3, 1, 4), (3, -1, 1)):
        with pytest.raises(ValueError):
            pass_at_k(*bad)


def test_unbiased_by_exact_expectation() -> None:
    # E over c ~ Binomial(n, p) of the estimator equals 1-(1-p)^k and p^k exactly
    n, p = 5, 0.37
    for k in range(1, n + 1):
        w = [math.comb(n, c) * p ** c * (1 - p) ** (n - c) for c in range(n + 1)]
        assert sum(wi * pass_at_k(n, c, k) for c, wi in enumerate(w)) == pytest.approx(
            1 - (1 - p) ** k)
        assert sum(wi * pass_hat_k(n, c, k) for c, wi in enumerate(w)) == pytest.approx(p ** k)


def test_simulation_matches_the_truth_and_beats_the_plug_in() -> None:
    rng = np.random.default_rng(20261201)
    n, k, cases = 5, 3, 20_000
    p = rng.beta(2, 2, size=cases)  # each case its own pass probability
    c = rng.binomial(n, p)
    est = condition_pass_k([n] * cases, c.tolist(), k)
    at_k, hat_k = est["pass_at_k"][k - 1], est["pass_hat_k"][k - 1]
    truth_at, truth_hat = float(np.mean(1 - (1 - p) ** k)), float(np.mean(p ** k))
    se = 1 / math.sqrt(cases)  # the estimators lie in [0, 1]: sd <= 1/2
    assert abs(at_k - truth_at) < 4 * se and abs(hat_k - truth_hat) < 4 * se
    plug_in = float(np.mean(1 - (1 - c / n) ** k))
    assert abs(plug_in - truth_at) > abs(at_k - truth_at)  # the naive one is biased


def test_condition_mean_skips_cases_with_fewer_attempts() -> None:
    # case A: 3 usable, 2 passed; case B: 2 usable (one errored), 2 passed
    out = condition_pass_k([3, 2], [2, 2], 3)
    assert out["k"] == [1, 2, 3] and out["n_cases"] == [2, 2, 1]
    assert out["pass_at_k"] == pytest.approx([(2 / 3 + 1) / 2, (1 + 1) / 2, 1.0])
    assert out["pass_hat_k"] == pytest.approx([(2 / 3 + 1) / 2, (1 / 3 + 1) / 2, 0.0])
    assert condition_pass_k([1], [1], 2)["pass_at_k"] == [1.0, None]
    assert case_pass_k(2, 1, 3) == {"pass_at_k": [0.5, 1.0, None],
                                    "pass_hat_k": [0.5, 0.0, None]}
