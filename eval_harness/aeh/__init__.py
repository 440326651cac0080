"""agent-eval-harness (opendatahub-io/agent-eval-harness) as a dialect of this tool.

Everything that exists only to read that tool's files lives here, behind the core's two
seams:

- :data:`DIALECT` — its ``eval.yaml`` keys translated into this tool's
  (:mod:`eval_harness.aeh.dialect`, with :mod:`~eval_harness.aeh.runner_keys`,
  :mod:`~eval_harness.aeh.judge_keys` and its builtin judges
  :mod:`~eval_harness.aeh.builtin_judges`), for the config-dialect seam
  (:mod:`eval_harness.config.dialects`);
- :data:`FORMAT` — its run directories (:mod:`eval_harness.aeh.run_format`, reading
  :mod:`~eval_harness.aeh.summary_chunk`, :mod:`~eval_harness.aeh.scoring`,
  :mod:`~eval_harness.aeh.cases`), for the run-format registry
  (:mod:`eval_harness.analysis.loading.formats`);
- :func:`~eval_harness.aeh.export.aeh_fields` — the fields its consumers read in
  ``anova.json``.

:func:`register` installs both; the application layer calls it for every door. Core
packages never import this package. Importing it stays light (no numpy or pandas).
"""

from __future__ import annotations

from typing import Any

from eval_harness.aeh.dialect import translate as DIALECT
from eval_harness.aeh.run_format import FORMAT, NAME

__all__ = ["DIALECT", "FORMAT", "NAME", "format_options", "register"]


def register() -> None:
    """Apply :data:`DIALECT` to configs loaded without explicit dialects and read
    :data:`FORMAT`'s run directories (idempotent)."""
    from eval_harness.analysis.loading.formats import register_format
    from eval_harness.config.dialects import register_dialect

    register_dialect(DIALECT)
    register_format(FORMAT)


def format_options(errors: str = "exclude") -> dict[str, dict[str, Any]]:
    """``load_runs``' ``format_options`` for this format: ``errors`` is ``--aeh-errors`` /
    ``aeh_errors=`` (``exclude`` or ``zero``)."""
    return {NAME: {"errors": errors}}
