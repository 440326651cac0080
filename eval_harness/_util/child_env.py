"""The environment of every process we start: ours, minus the CI runner's channels.

A GitHub Actions job hands each step files that drive the *next* steps — appending to
``$GITHUB_ENV`` sets variables, to ``$GITHUB_PATH`` puts a folder first on PATH, to
``$GITHUB_OUTPUT`` sets step outputs — and runtime tokens (``ACTIONS_RUNTIME_TOKEN``, the
OIDC ``ACTIONS_ID_TOKEN_REQUEST_*``). An agent under test that inherits them can plant a
``python`` for the step that next runs with the job's token. :func:`child_env` is the one
function every child-start path uses (agents: the cli and claude-code runners; hooks and
their conditions; the user-code process of ``check`` judges and python functions; the
``orchestrate`` run the Action starts; Ray workers, through :func:`scrub_process`), so no
child ever sees :data:`CI_STEP_FILES` or a variable starting with :data:`CI_PREFIXES`
(docs/security.md lists them).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: GitHub Actions step files and command channels a child never sees
CI_STEP_FILES = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE",
                 "GITHUB_STEP_SUMMARY")
#: every variable with this prefix (ACTIONS_RUNTIME_TOKEN, ACTIONS_RUNTIME_URL,
#: ACTIONS_RESULTS_URL, ACTIONS_CACHE_URL, ACTIONS_ID_TOKEN_REQUEST_TOKEN / _URL,
#: ACTIONS_ALLOW_UNSECURE_COMMANDS, ACTIONS_STEP_DEBUG, ...)
CI_PREFIXES = ("ACTIONS_",)


def is_ci_channel(name: str) -> bool:
    """True for a variable no child may see."""
    return name in CI_STEP_FILES or name.startswith(CI_PREFIXES)


def child_env(*layers: Mapping[str, str] | None,
              base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with ``layers`` merged over it in
    order, minus every CI channel (also when a layer sets one)."""
    merged = dict(os.environ if base is None else base)
    for layer in layers:
        if layer:
            merged.update(layer)
    return {k: v for k, v in merged.items() if not is_ci_channel(k)}


def scrub_process() -> None:
    """Drop the CI channels from this process's own environment (a Ray worker, whose
    environment came from whoever started the cluster), so nothing it starts inherits
    them."""
    for name in [k for k in os.environ if is_ci_channel(k)]:
        os.environ.pop(name, None)
