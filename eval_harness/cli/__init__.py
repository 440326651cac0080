"""cli stage."""

from eval_harness.app.registry import install_defaults

install_defaults()  # the AEH dialect and run format, as every door reads them
