"""Load-time warnings for secrets written literally in a config (not errors).

A literal secret is masked in everything printed or written (``eval_harness._util.redact``), but
it still sits in the file, and so in git. A value is reported, with its key path and a
``${VAR}`` suggestion, when it is not a ``${VAR}`` reference and

- it has the shape of a well-known credential anywhere in the config: ``sk-…`` (OpenAI,
  Anthropic ``sk-ant-…``), ``ghp_`` / ``gho_`` / ``ghs_`` / ``github_pat_`` (GitHub),
  ``xox?-`` (Slack), ``AKIA…`` (AWS access key id), ``AIza…`` (Google), a PEM private key; or
- it sits under a secret-looking key (``api_key``, ``token``, ``password``, ``secret``,
  ``Authorization``…; :func:`eval_harness._util.redact.secret_key_name`) and is at least
  :data:`MIN_LITERAL` characters long. Keys naming where a secret lives rather than the
  secret (``api_key_file``, ``token_env``, ``..._path``) are not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from eval_harness._util.redact import secret_key_name
from eval_harness.config.yamlio import KeyPath, format_path

MIN_LITERAL = 8
_KNOWN = re.compile(
    r"(?<![A-Za-z0-9])(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----)")
_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}")
_LOCATOR_WORDS = ("file", "path", "env", "var", "name", "url")


def _env_name(path: KeyPath) -> str:
    words = [str(p) for p in path if isinstance(p, str)][-2:]
    return re.sub(r"[^A-Z0-9]+", "_", "_".join(words).upper()).strip("_") or "SECRET"


def _locator(key: str) -> bool:
    return re.split(r"[_\-.]", key.lower())[-1] in _LOCATOR_WORDS


def literal_secrets(raw: Any, path: KeyPath = ()) -> list[str]:
    """One warning per literal secret in the raw (uninterpolated) config."""
    found: list[str] = []
    if isinstance(raw, Mapping):
        for k, v in raw.items():
            found += literal_secrets(v, (*path, str(k)))
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            found += literal_secrets(v, (*path, i))
    elif isinstance(raw, str) and raw.strip():
        key = next((p for p in reversed(path) if isinstance(p, str)), "")
        literal = _REFERENCE.sub("", raw).strip()
        known = _KNOWN.search(literal) is not None
        under_key = (secret_key_name(key) and not _locator(key)
                     and len(literal.removeprefix("Bearer ").strip()) >= MIN_LITERAL)
        if known or under_key:
            what = "looks like a credential" if known else "is a literal secret-looking value"
            found.append(f"config: `{format_path(path)}` {what}; it is masked in output but "
                         f"stays in the file: write `${{{_env_name(path)}}}` and set that "
                         "environment variable instead")
    return found
