"""Judge module paths that are persisted but have moved.

A ``module`` judge's path is written into recorded configs (``eval_config.json``) and is
part of every judge digest, so a path written by an earlier version must keep naming the
same code: changing the string would change the digests and rescore existing runs. This
table maps such a persisted path to where the module lives now; the python-judge resolver
(:mod:`eval_harness.judges.code`) imports the current one. The strings are data, not
imports: nothing here imports the modules named.
"""

from __future__ import annotations

#: persisted module path -> the module's current path
MOVED_MODULES: dict[str, str] = {
    # agent-eval-harness's builtin judges (written by its config dialect)
    "eval_harness.judges.aeh_builtins": "eval_harness.aeh.builtin_judges",
}


def current_module(name: str) -> str:
    """The module to import for the persisted module path ``name``."""
    return MOVED_MODULES.get(name, name)
