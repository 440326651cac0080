"""Continuous-integration glue (the GitHub Action's steps, runnable locally)."""

from eval_harness.app.registry import install_defaults

install_defaults()  # the AEH dialect and run format, as every door reads them
