"""``orchestrate serve``: a local dashboard over run directories (docs/dashboard.md).

Layers: :mod:`catalog` (which evals, their change tokens), :mod:`evaldata` (one eval's
analysis, cached per change token), :mod:`casedata` (one case across conditions),
:mod:`security` (Host, CSP, same-origin + token), :mod:`app` (routes and templates).
Needs the ``serve`` extra (starlette, uvicorn, jinja2).
"""

import eval_harness.app  # noqa: F401  (the application layer: its dialects and run formats)
