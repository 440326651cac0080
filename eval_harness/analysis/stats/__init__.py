"""Pure statistics core of the analysis stage (numpy/pandas in, frozen dataclasses out).

- `anova_balanced` / `anova_frame`: repeated-measures ANOVA with Greenhouse–Geisser
  correction (`rm`, default) or the random-intercept mixed model (`lmm`).
- `pairwise_contrasts`: marginal-mean contrasts per factor, corrected within the factor.
- `adjust_pvalues` / `canonical_correction`: Holm and Benjamini–Hochberg as R `p.adjust`.
- `replication_variance`, `per_judge_screen`.

Validated against R (afex, lmerTest, emmeans); see tests/analysis/stats.
"""

from __future__ import annotations

from eval_harness.analysis.stats.balanced import anova_balanced, balanced_pvalues
from eval_harness.analysis.stats.contrasts import pairwise_contrasts
from eval_harness.analysis.stats.correction import adjust_pvalues, canonical_correction
from eval_harness.analysis.stats.frame import anova_frame, cell_means, observed_levels
from eval_harness.analysis.stats.input_errors import StatsInputError
from eval_harness.analysis.stats.per_judge import JudgeExclusion, PerJudgeScreen, per_judge_screen
from eval_harness.analysis.stats.replication import replication_variance
from eval_harness.analysis.stats.results import (
    LMM_LABEL,
    RM_LABEL,
    AnovaResult,
    Contrast,
    ExcludedTerm,
    TermResult,
)

__all__ = [
    "LMM_LABEL",
    "RM_LABEL",
    "AnovaResult",
    "Contrast",
    "ExcludedTerm",
    "JudgeExclusion",
    "PerJudgeScreen",
    "StatsInputError",
    "TermResult",
    "adjust_pvalues",
    "anova_balanced",
    "anova_frame",
    "balanced_pvalues",
    "canonical_correction",
    "cell_means",
    "observed_levels",
    "pairwise_contrasts",
    "per_judge_screen",
    "replication_variance",
]
