"""The application layer: the two commands every door calls.

- :func:`eval_harness.app.run.run` (:class:`~eval_harness.app.options.RunOptions`): run
  the matrix of an eval.yaml;
- :func:`eval_harness.app.analyze.analyze`
  (:class:`~eval_harness.app.options.AnalysisOptions`) -> ``AnalysisOutputs``: analyse run
  directories (``write=False``: in memory, for the dashboard).

The doors (``cli/``, ``api.py``, ``serve/``, ``ci/``) map their inputs to these options
and present the outputs; none of them assembles the pipeline itself. Modules are imported
on use (``--dry-run`` stays light).
"""
