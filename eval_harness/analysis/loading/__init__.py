"""Run directories → the tidy frame, and the public run-format registry.

- :mod:`~eval_harness.analysis.loading.tidy_frame`: :func:`load_runs` (the tidy frame);
- :mod:`~eval_harness.analysis.loading.formats`: the run-format registry (:class:`RunFormat`,
  :func:`register_format`): which layouts of run directories analysis reads;
- :mod:`~eval_harness.analysis.loading.native`: this tool's own layout;
- :mod:`~eval_harness.analysis.loading.discover`: finding run directories under roots;
- :mod:`~eval_harness.analysis.loading.browse`: runs and cases for people (``runs`` / ``show``);
- :mod:`~eval_harness.analysis.loading.chunk`, :mod:`packed`, :mod:`collect`: one run's
  columns, their compact form, and all runs' columns with duplicates resolved.

This package stays light to import: pandas and numpy load with the loader.
"""
