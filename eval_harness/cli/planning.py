"""Power planning shown by ``--dry-run`` next to the cost estimate.

Variance components come from earlier runs of the same eval (``runs/<eval>/``) when there
are any, otherwise from ``matrix.analysis.power`` in the config; without either nothing is
shown. The MDE is for one pairwise contrast at the planned cases and replications.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval_harness.analysis.power import PowerPrior, power_summary, variance_from_frame


def _prior_from_runs(eval_dir: Path) -> PowerPrior | None:
    if not eval_dir.is_dir() or not any(eval_dir.glob("*/run.json")):
        return None
    from eval_harness.analysis.loading.loader import load_runs

    frame = load_runs(eval_dir)
    if frame.empty:
        return None
    return variance_from_frame(frame)


def planning_summary(exp: Any, runs_dir: Path) -> dict[str, Any] | None:
    """MDE (and cases/replications needed for a target) for a pairwise contrast."""
    analysis = exp.matrix.block.analysis
    config_prior = analysis.power
    prior = _prior_from_runs(runs_dir / exp.name)
    if prior is None and config_prior is not None:
        prior = PowerPrior(config_prior.case_sd**2, config_prior.noise_sd**2, "config")
    if prior is None:
        return None
    target = config_prior.target_effect if config_prior else None
    power = config_prior.power if config_prior else 0.8
    out = power_summary(prior, len(exp.cases), exp.replications, target_effect=target,
                        alpha=analysis.alpha, power=power)
    text = (f"minimum detectable difference in the composite between two conditions: "
            f"{out['mde']:.3f} at {len(exp.cases)} cases × {exp.replications} replications "
            f"(alpha {analysis.alpha}, power {power}; variance from {prior.source})")
    if target is not None:
        text += (f"; to detect {target:g} you need {out['cases_needed']} cases"
                 + (f" or {out['replications_needed']} replications"
                    if out.get("replications_needed") else ""))
    out["text"] = text
    return out
