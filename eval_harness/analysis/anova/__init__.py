"""The anova document (``anova.json``): design check, ANOVA, contrasts, per-judge screen,
variance components, power, and the per-condition summaries and Pareto front, computed
once here and only rendered by ``eval_harness.reports``."""
