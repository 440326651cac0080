"""Power planning: the MDE formula, its inverses, variance components and the config prior."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eval_harness.analysis.anova.power import (
    cases_needed,
    mde,
    power_at,
    power_summary,
    prior_from_config,
    replications_needed,
    variance_from_components,
    variance_from_frame,
)
from eval_harness.errors import ConfigError, UsageError


def test_mde_formula() -> None:
    # R: (qnorm(0.975) + qnorm(0.8)) * sqrt((0.02 + 2 * 0.05 / 4) / 50) = 0.0840475565434
    assert mde(0.02, 0.05, 50, 4) == pytest.approx(0.0840475565434, rel=1e-10)
    # t variant: qt(0.975, 49) + qt(0.8, 49)
    q = stats.t.ppf(0.975, 49) + stats.t.ppf(0.8, 49)
    assert mde(0.02, 0.05, 50, 4, t=True) == pytest.approx(q * math.sqrt(0.045 / 50))
    assert power_at(mde(0.02, 0.05, 50, 4), 0.02, 0.05, 50, 4) == pytest.approx(0.8, abs=1e-3)


def _simulated_power(
    rng: np.random.Generator,
    effect: float,
    omega: float,
    sigma2: float,
    n: int,
    k: int,
    trials: int = 4_000,
) -> float:
    true_diff = effect + rng.normal(0.0, math.sqrt(omega), size=(trials, n))
    noise = rng.normal(0.0, math.sqrt(sigma2), size=(2, trials, n, k)).mean(axis=3)
    d = true_diff + noise[0] - noise[1]
    p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    return float(np.mean(p < 0.05))


@pytest.mark.parametrize(
    ("n", "k", "omega", "sigma2", "t"),
    [
        (100, 3, 0.02, 0.05, False),  # z formula is accurate with many cases
        (15, 2, 0.03, 0.04, True),  # t quantiles needed with few cases
    ],
)
def test_mde_has_80_percent_power_by_simulation(
    n: int, k: int, omega: float, sigma2: float, t: bool
) -> None:
    effect = mde(omega, sigma2, n, k, t=t)
    power = _simulated_power(np.random.default_rng(n * 7 + k), effect, omega, sigma2, n, k)
    assert power == pytest.approx(0.8, abs=0.025)  # MC SE = 0.0063 at 4,000 trials


def test_inverses() -> None:
    omega, sigma2 = 0.02, 0.06
    n = cases_needed(0.05, omega, sigma2, replications=3)
    assert mde(omega, sigma2, n, 3) <= 0.05 < mde(omega, sigma2, n - 1, 3)
    nt = cases_needed(0.05, omega, sigma2, replications=3, t=True)
    assert nt >= n and mde(omega, sigma2, nt, 3, t=True) <= 0.05 < mde(
        omega, sigma2, nt - 1, 3, t=True
    )
    k = replications_needed(0.08, omega, sigma2, n_cases=60)
    assert k is not None and mde(omega, sigma2, 60, k) <= 0.08 < mde(omega, sigma2, 60, k - 1)
    # ω²/n alone exceeds the budget: replications cannot reach it.
    assert replications_needed(0.01, omega, sigma2, n_cases=60) is None
    with pytest.raises(UsageError):
        cases_needed(0.0, omega, sigma2)
    with pytest.raises(UsageError):
        mde(-1.0, sigma2, 10)


def test_variance_from_frame_recovers_components() -> None:
    rng = np.random.default_rng(9)
    n, k, omega, sigma2 = 400, 4, 0.04, 0.09
    case = rng.normal(0, 0.5, size=n)
    inter = rng.normal(0, math.sqrt(omega / 2), size=(n, 2))  # ω² = 2·σ²_{case×cond}
    rows = []
    for i in range(n):
        for c, cid in enumerate(("A", "B")):
            for r in range(k):
                y = 0.5 + case[i] + inter[i, c] + rng.normal(0, math.sqrt(sigma2))
                rows.append(
                    {
                        "condition_id": cid,
                        "case_id": f"c{i}",
                        "replication": r + 1,
                        "judge": "composite",
                        "value": y,
                        "errored": False,
                        "case_status": "ok",
                    }
                )
    prior = variance_from_frame(pd.DataFrame(rows))
    assert prior is not None and prior.source == "runs"
    assert prior.resid_var == pytest.approx(sigma2, rel=0.08)
    assert prior.case_var == pytest.approx(omega, rel=0.3)


def test_variance_from_components_mapping() -> None:
    prior = variance_from_components(
        {"variance_components": {"case": 0.3, "residual": 0.05, "replication": 0.06}}, 3
    )
    assert prior.case_var == pytest.approx(2 * (0.05 - 0.02)) and prior.resid_var == 0.06
    no_rep = variance_from_components({"case": 0.3, "residual": 0.05, "replication": None}, 1)
    assert no_rep.case_var == pytest.approx(0.1) and no_rep.resid_var == 0.0 and no_rep.note
    with pytest.raises(UsageError):
        variance_from_components({"case": 1.0}, 1)


def test_prior_from_config_and_summary() -> None:
    prior, targets = prior_from_config({"case_sd": 0.1, "noise_sd": 0.3, "target_effect": 0.05})
    assert prior.case_var == pytest.approx(0.01) and prior.resid_var == pytest.approx(0.09)
    summary = power_summary(prior, 40, 3, targets["target_effect"])
    assert summary["mde"] == pytest.approx(mde(0.01, 0.09, 40, 3))
    assert summary["cases_needed"] == cases_needed(0.05, 0.01, 0.09, 3)
    with pytest.raises(ConfigError, match=r"matrix\.analysis\.power\.noise_sd"):
        prior_from_config({"case_sd": 0.1})
    with pytest.raises(ConfigError, match="case_sd"):
        prior_from_config({"case_sd": True, "noise_sd": 0.1})
    with pytest.raises(ConfigError, match=r"power\.power"):
        prior_from_config({"case_sd": 0.1, "noise_sd": 0.1, "power": 1.2})
    with pytest.raises(ConfigError, match="unknown key"):
        prior_from_config({"case_sd": 0.1, "noise_sd": 0.1, "case_var": 1})
