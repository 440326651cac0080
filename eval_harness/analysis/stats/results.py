"""Frozen result records of the statistics core (pure data, no behaviour).

Field names follow DESIGN.md ("Statistics" and the `anova.json` contract) so the
report stage can serialise them without renaming.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RM_LABEL = "repeated-measures (GG)"
LMM_LABEL = "random intercept (compound symmetry)"


@dataclass(frozen=True)
class TermResult:
    """One tested ANOVA term (main effect or interaction).

    `p_raw` is the p that enters the multiple-comparison family: Greenhouse–Geisser
    corrected under `rm`, equal to `p_uncorrected` under `lmm`.
    """

    term: str
    F: float
    df_num: float
    df_den: float
    p_uncorrected: float
    p_raw: float
    gg_epsilon: float | None
    partial_eta_sq: float
    ss: float
    ss_error: float
    ms: float
    ms_error: float


@dataclass(frozen=True)
class ExcludedTerm:
    """A term without a finite p (never counted in a correction family)."""

    term: str
    reason: str


@dataclass(frozen=True)
class AnovaResult:
    """A whole ANOVA table plus the design facts a report needs."""

    method: str
    label: str
    factors: tuple[str, ...]
    levels: dict[str, tuple[Any, ...]]
    n_cases: int
    terms: dict[str, TermResult]
    excluded_terms: tuple[ExcludedTerm, ...]
    case_variance: float | None
    residual_variance: float | None
    fit: str
    notes: tuple[str, ...] = field(default=())
    #: the fitted model behind the table (method `mixed`: a `slopes.SlopesModel`), for
    #: contrasts from the same fit
    model: Any = None

    def p_raw(self) -> dict[str, float]:
        """Raw p per tested term, in term order (the family for a correction)."""
        return {name: t.p_raw for name, t in self.terms.items()}


@dataclass(frozen=True)
class Contrast:
    """One pairwise difference of marginal means, `a - b`."""

    a: Any
    b: Any
    estimate: float
    se: float
    df: float
    ci_low: float
    ci_high: float
    t: float
    p_raw: float
    p_adjusted: float
    significant: bool
