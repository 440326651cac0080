"""The application layer: the two commands every door calls.

- :func:`eval_harness.app.run.run` (:class:`~eval_harness.app.options.RunOptions`): run
  the matrix of an eval.yaml;
- :func:`eval_harness.app.analyze.analyze`
  (:class:`~eval_harness.app.options.AnalysisOptions`) -> ``AnalysisOutputs``: analyse run
  directories (``write=False``: in memory, for the dashboard).

The doors (``cli/``, ``api.py``, ``serve/``, ``ci/``) map their inputs to these options
and present the outputs; none of them assembles the pipeline itself. Modules are imported
on use (``--dry-run`` stays light).

Importing this package registers the shipped config dialects and run formats
(:func:`~eval_harness.app.plugins.install_defaults`; the one place it is called), so every
door that reaches the application layer reads the same files the same way.
"""

from eval_harness.app.plugins import install_defaults

install_defaults()
