"""The dialects and run formats every door uses, installed in one place.

The core reads this tool's own configs and run directories; other tools' come through
its two seams, the config-dialect registry (:mod:`eval_harness.config.dialects`) and the
run-format registry (:mod:`eval_harness.analysis.loading.formats`). :func:`install_defaults`
fills both with the ones shipped here (agent-eval-harness, :mod:`eval_harness.aeh`); the
application layer's package (``eval_harness/app/__init__.py``) calls it when it is first
imported, so every door (CLI, Python API, dashboard, CI glue) reads the same files the same
way without registering anything itself.
"""

from __future__ import annotations


def install_defaults() -> None:
    """Register the shipped dialects and run formats (idempotent, cheap: no numpy)."""
    from eval_harness.aeh import register

    register()
