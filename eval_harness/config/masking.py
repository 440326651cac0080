"""Masking for anything printed: literal values under secret-looking keys become ``***``.

Values written as ``${VAR}`` stay as written (the raw config is never interpolated for
printing), so resolved secrets never appear.
"""

from __future__ import annotations

import re
from typing import Any

from eval_harness._util.redact import redact

_SECRET_KEY = re.compile(r"(key|token|secret|password|passwd|authorization|credential)", re.I)
_ENV_ONLY = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}\Z")


def mask_secrets(value: Any, key: str = "") -> Any:
    """Return a copy of ``value`` with secrets masked."""
    if isinstance(value, dict):
        return {k: mask_secrets(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v, key) for v in value]
    if isinstance(value, str) and key and _SECRET_KEY.search(key) and not _ENV_ONLY.match(value):
        return "***"
    return value


def mask_argv(argv: list[str], secrets: list[str]) -> list[str]:
    """Replace every occurrence of a known secret value inside argv with ``***`` (and every
    registered secret, see :mod:`eval_harness._util.redact`)."""
    out = []
    for arg in map(redact, argv):
        for secret in secrets:
            if secret and len(secret) >= 4:
                arg = arg.replace(secret, "***")
        out.append(arg)
    return out
