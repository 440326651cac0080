"""The anova document (``anova.json``) and the per-condition numbers the reports show.

How anova.json is built, from the tidy frame (``analysis.loading``):

- :mod:`.document` (``build_anova``): the order of the steps and the document itself;
- :mod:`.design_check`: which factors and cases the ANOVA can use (usable samples of the
  response, dropped factors, excluded cases, balance);
- ``analysis.stats``: the ANOVA (rm, mixed, lmm), corrections, contrasts, effect sizes;
- :mod:`.document_parts`: term tables, contrasts, simple effects, the per-judge screen;
- :mod:`.power`: minimum detectable effect and planning;
- :mod:`.condition_summaries`: the per-condition summaries and the Pareto front, computed
  once here (anova.json's and the report's rows) and only rendered by ``eval_harness.reports``;
- :mod:`.descriptives`: the report's case × condition grid, marginal means, judge means.
"""
