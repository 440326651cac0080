"""Power planning for a pairwise contrast: minimum detectable effect, cases, replications.

Model (Miller 2024, "Adding Error Bars to Evals: A Statistical Approach to Language Model
Evaluations", arXiv:2411.00640, §3–4). Each case i has a true score μ_ic under condition c;
a sample is y_icr = μ_ic + ε_icr with replication noise Var(ε) = σ² (``resid_var``). The
paired difference of two conditions A, B on case i, averaged over K replications each, is

    d_i = (μ_iA − μ_iB) + (ε̄_iA − ε̄_iB),   Var(d_i) = ω² + 2σ²/K,

where **ω² (``case_var``) = Var_i(μ_iA − μ_iB)**: the variance across cases of the *true*
per-case difference, i.e. how differently cases react to the change — the part of the
per-case difference that more replications cannot remove. (The case main effect cancels in
the pairing; in ANOVA terms ω² = 2·σ²_{case×condition}.) With n cases the mean difference
has SE = √((ω² + 2σ²/K)/n) and a two-sided level-α test has power 1 − β at

    MDE = (z_{1−α/2} + z_{1−β}) · √((ω² + 2σ²/K)/n)          (DESIGN.md; normal approx.)

``t=True`` replaces the z quantiles with t quantiles on n − 1 df (the paired t test actually
run), which is more accurate below ~30 cases. Solving the same equation for n or K gives
``cases_needed`` and ``replications_needed``.

Variance components come from existing runs (``variance_from_frame``; or an AnovaResult-like
``variance_components`` dict via ``variance_from_components``) or from a prior in the
config (``prior_from_config``; proposed key ``matrix.analysis.power``:
``{case_sd: ω, noise_sd: σ, target_effect: δ, power: 0.8}``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from eval_harness._util.numbers import run_number
from eval_harness.errors import ConfigError, UsageError

if TYPE_CHECKING:
    import pandas as pd

# Normal quantiles from the standard library (Wichura's AS 241, ~1e-16 relative): planning
# at --dry-run must not import numpy, scipy or pandas (seconds of start-up); the t quantile
# and the frame-based estimate import them when used.
_NORMAL = NormalDist()

MAX_CASES = 10_000_000  # search bound for the t-based case count


@dataclass(frozen=True)
class PowerPrior:
    """Variance components for planning (see the module docstring for definitions)."""

    case_var: float  # ω²: variance across cases of the true paired difference
    resid_var: float  # σ²: replication noise variance of one sample
    source: str  # "runs" | "anova" | "config"
    note: str | None = None


def _check(alpha: float, power: float, case_var: float, resid_var: float) -> None:
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise UsageError(f"power planning: need 0 < alpha, power < 1 (got {alpha}, {power})")
    for name, v in (("case_var", case_var), ("resid_var", resid_var)):
        if not (math.isfinite(v) and v >= 0.0):
            raise UsageError(f"power planning: {name} must be a finite number >= 0, got {v}")


def _quantile_sum(alpha: float, power: float, df: float | None) -> float:
    if df is None:
        return _NORMAL.inv_cdf(1.0 - alpha / 2.0) + _NORMAL.inv_cdf(power)
    from eval_harness.analysis.stats.dist import t_ppf

    return float(t_ppf(1.0 - alpha / 2.0, df) + t_ppf(power, df))


def mde(
    case_var: float,
    resid_var: float,
    n_cases: int,
    replications: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    t: bool = False,
) -> float:
    """Minimum detectable paired difference: (q_{1−α/2} + q_power)·√((ω² + 2σ²/K)/n)."""
    _check(alpha, power, case_var, resid_var)
    if n_cases < (2 if t else 1) or replications < 1:
        raise UsageError("power planning: need n_cases >= 1 (>= 2 with t) and replications >= 1")
    var = case_var + 2.0 * resid_var / replications
    return _quantile_sum(alpha, power, n_cases - 1 if t else None) * math.sqrt(var / n_cases)


def power_at(
    effect: float,
    case_var: float,
    resid_var: float,
    n_cases: int,
    replications: int = 1,
    alpha: float = 0.05,
) -> float:
    """Approximate power of the two-sided paired test at a true difference ``effect``."""
    _check(alpha, 0.5, case_var, resid_var)
    se = math.sqrt((case_var + 2.0 * resid_var / replications) / n_cases)
    if se == 0.0:
        return 1.0 if effect != 0 else alpha
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0)
    shift = abs(effect) / se
    return _NORMAL.cdf(shift - z) + _NORMAL.cdf(-z - shift)  # sf(x) = cdf(-x)


def cases_needed(
    target_effect: float,
    case_var: float,
    resid_var: float,
    replications: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    t: bool = False,
) -> int:
    """Smallest n with MDE(n) ≤ ``target_effect`` (at least 2)."""
    _check(alpha, power, case_var, resid_var)
    if not (math.isfinite(target_effect) and target_effect > 0) or replications < 1:
        raise UsageError("power planning: need target_effect > 0 and replications >= 1")
    var = case_var + 2.0 * resid_var / replications
    n = max(2, math.ceil(_quantile_sum(alpha, power, None) ** 2 * var / target_effect**2 - 1e-9))
    if t:  # t quantiles only shrink as n grows: step up from the normal answer
        while (
            n < MAX_CASES
            and mde(case_var, resid_var, n, replications, alpha, power, t=True) > target_effect
        ):
            n += 1 if n < 1000 else max(1, n // 1000)
    return n


def replications_needed(
    target_effect: float,
    case_var: float,
    resid_var: float,
    n_cases: int,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    t: bool = False,
) -> int | None:
    """Smallest K with MDE(K) ≤ ``target_effect`` at ``n_cases``; None when unreachable
    (ω²/n alone already exceeds (δ/q)²: only more cases help)."""
    _check(alpha, power, case_var, resid_var)
    if not (math.isfinite(target_effect) and target_effect > 0) or n_cases < 2:
        raise UsageError("power planning: need target_effect > 0 and n_cases >= 2")
    q = _quantile_sum(alpha, power, n_cases - 1 if t else None)
    room = n_cases * target_effect**2 / q**2 - case_var  # budget left for 2σ²/K
    if room <= 0.0:
        return None
    if resid_var == 0.0:
        return 1
    return max(1, math.ceil(2.0 * resid_var / room - 1e-9))


def variance_from_components(components: Mapping[str, Any], replications: int) -> PowerPrior:
    """Map an ANOVA ``variance_components`` dict ({"case", "residual", "replication"}, or a
    whole anova.json-like dict holding it) to (ω², σ²).

    Interpretation: ``residual`` is the error variance of per-(case, condition) means,
    E = σ²_{case×condition} + σ²/K; ``replication`` is σ² (replicate-level). Then
    ω² = 2·max(0, residual − replication/K). Without a replication component (K = 1) σ²
    cannot be separated: ω² = 2·residual and σ² = 0, so the plan is right at the observed K
    but cannot show what more replications would buy (noted).
    """
    comp = components.get("variance_components", components)
    if not isinstance(comp, Mapping) or "residual" not in comp:
        raise UsageError("variance components need a 'residual' entry")
    resid = comp.get("residual")
    rep = comp.get("replication")
    if not isinstance(resid, (int, float)) or not math.isfinite(resid) or resid < 0:
        raise UsageError(f"variance component 'residual' is not usable: {resid!r}")
    if isinstance(rep, (int, float)) and math.isfinite(rep) and rep >= 0 and replications >= 1:
        omega = 2.0 * max(0.0, float(resid) - float(rep) / replications)
        return PowerPrior(omega, float(rep), "anova")
    return PowerPrior(
        2.0 * float(resid),
        0.0,
        "anova",
        "no replication component: noise and case-by-condition variance are not separated",
    )


def variance_from_frame(frame: pd.DataFrame, judge: str = "composite") -> PowerPrior | None:
    """Estimate (ω², σ²) from replicate-level data (usable samples of ``judge``).

    σ² = pooled within-cell variance of replications (cells with ≥ 2). ω² = 2·max(0,
    MS_res − σ²/K_h), where MS_res is the two-way (case × condition) residual mean square of
    the cell means over complete cases, E[MS_res] = σ²_{case×condition} + σ²/K, and K_h is
    the harmonic mean of replications per cell. None with < 2 conditions or < 2 cases.
    """
    import numpy as np
    import pandas as pd

    df = frame[(frame["judge"] == judge)]
    if "errored" in df:
        df = df[~df["errored"].astype(bool)]
    if "case_status" in df:
        df = df[(df["case_status"] != "errored").to_numpy(dtype=bool)]
    df = df[np.isfinite(pd.to_numeric(df["value"], errors="coerce"))]
    y = pd.to_numeric(df["value"], errors="coerce")
    cells = df.assign(y=y).groupby(["case_id", "condition_id"], observed=True)["y"]
    stats = cells.agg(["mean", "count", "var"])
    multi = stats[stats["count"] >= 2]
    dof = float((multi["count"] - 1).sum())
    sigma2 = float(((multi["count"] - 1) * multi["var"]).sum() / dof) if dof > 0 else math.nan
    means = stats["mean"].unstack("condition_id").dropna(axis=0, how="any")
    n, c = means.shape
    if n < 2 or c < 2:
        return None
    m = means.to_numpy()
    resid = m - m.mean(axis=1, keepdims=True) - m.mean(axis=0, keepdims=True) + m.mean()
    ms_res = float((resid**2).sum() / ((n - 1) * (c - 1)))
    counts = stats["count"].unstack("condition_id").loc[means.index].to_numpy()
    k_h = float(counts.size / (1.0 / counts).sum())
    if not math.isfinite(sigma2):
        return PowerPrior(
            2.0 * ms_res, 0.0, "runs", "one replication per cell: noise not separated"
        )
    return PowerPrior(2.0 * max(0.0, ms_res - sigma2 / k_h), sigma2, "runs")


def _num(
    mapping: Mapping[str, Any], key: str, path: str, lo: float, hi: float | None
) -> float | None:
    v = mapping.get(key)
    if v is None:
        return None
    if run_number(v) is None:
        raise ConfigError(f"must be a number, got {v!r}", path=f"{path}.{key}")
    if v < lo or (hi is not None and v >= hi) or (key in ("target_effect", "power") and v <= 0):
        bound = f"in ({lo}, {hi})" if hi is not None else f">= {lo}"
        raise ConfigError(f"must be {bound}, got {v!r}", path=f"{path}.{key}")
    return float(v)


def prior_from_config(
    block: Any, path: str = "matrix.analysis.power"
) -> tuple[PowerPrior, dict[str, float]]:
    """Validate the config block ``{case_sd, noise_sd[, target_effect, power, alpha]}``.

    ``case_sd`` = ω (SD across cases of the true difference between two conditions, in
    composite units), ``noise_sd`` = σ (SD of one sample around its case's mean). Returns
    the prior and the optional planning targets.
    """
    if not isinstance(block, Mapping):
        raise ConfigError(
            "must be a mapping", path=path, hint="write power: {case_sd: 0.15, noise_sd: 0.3}"
        )
    allowed = {"case_sd", "noise_sd", "target_effect", "power", "alpha"}
    for key in block:
        if key not in allowed:
            raise ConfigError(
                f"unknown key (allowed: {', '.join(sorted(allowed))})", path=f"{path}.{key}"
            )
    case_sd = _num(block, "case_sd", path, 0.0, None)
    noise_sd = _num(block, "noise_sd", path, 0.0, None)
    if case_sd is None or noise_sd is None:
        missing = "case_sd" if case_sd is None else "noise_sd"
        raise ConfigError(
            "is required",
            path=f"{path}.{missing}",
            hint="write power: {case_sd: 0.15, noise_sd: 0.3}",
        )
    targets = {}
    for key, hi in (("target_effect", None), ("power", 1.0), ("alpha", 1.0)):
        v = _num(block, key, path, 0.0, hi)
        if v is not None:
            targets[key] = v
    return PowerPrior(case_sd**2, noise_sd**2, "config"), targets


def power_summary(
    prior: PowerPrior,
    n_cases: int,
    replications: int,
    target_effect: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> dict[str, Any]:
    """JSON block for ``--dry-run`` / reports: MDE at the plan and what a target needs."""
    out: dict[str, Any] = {
        "source": prior.source,
        "note": prior.note,
        "case_var": prior.case_var,
        "resid_var": prior.resid_var,
        "n_cases": n_cases,
        "replications": replications,
        "alpha": alpha,
        "power": power,
        "mde": mde(prior.case_var, prior.resid_var, n_cases, replications, alpha, power),
        "mde_t": mde(prior.case_var, prior.resid_var, n_cases, replications, alpha, power, t=True)
        if n_cases >= 2
        else None,
        "formula": "(z_{1-a/2} + z_power) * sqrt((case_var + 2*resid_var/K) / n)",
    }
    if target_effect is not None:
        out["target_effect"] = target_effect
        out["cases_needed"] = cases_needed(
            target_effect, prior.case_var, prior.resid_var, replications, alpha, power
        )
        out["replications_needed"] = (
            replications_needed(
                target_effect, prior.case_var, prior.resid_var, n_cases, alpha, power
            )
            if n_cases >= 2
            else None
        )
    return out
