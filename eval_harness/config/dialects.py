"""The config-dialect seam: other tools' ``eval.yaml`` keys translated into this tool's.

A *dialect* is a callable ``translate(raw, path, environ) -> raw``: it receives the merged
config (after ``extends``, before ``${VAR}`` interpolation and validation), the config
file's path and the environment, and returns a copy in this tool's schema, or raises a
:class:`~eval_harness.errors.ConfigError` for a key it cannot honour. A dialect must leave
a config it does not recognise unchanged in meaning (this tool's own configs pass through
every dialect). :func:`~eval_harness.config.loader.load_config` applies the dialects it is
given (``dialects=``) in order, else the registered ones, then this tool's own defaults
(:mod:`eval_harness.config.defaults`).

The core registers none: the application layer registers the dialects every door uses
(agent-eval-harness's, :mod:`eval_harness.aeh`), so core packages never import them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: ``(raw, path, environ) -> raw`` in this tool's schema
Dialect = Callable[[dict[str, Any], Path, Mapping[str, str]], dict[str, Any]]

_REGISTERED: list[Dialect] = []


def register_dialect(dialect: Dialect) -> None:
    """Apply ``dialect`` to every config loaded without explicit ``dialects=`` (once: a
    dialect registered again keeps its place)."""
    if dialect not in _REGISTERED:
        _REGISTERED.append(dialect)


def registered_dialects() -> tuple[Dialect, ...]:
    """The registered dialects, in registration order."""
    return tuple(_REGISTERED)


def apply_dialects(raw: dict[str, Any], path: Path, environ: Mapping[str, str],
                   dialects: tuple[Dialect, ...]) -> dict[str, Any]:
    """``raw`` passed through each dialect in turn."""
    return translate_dialects(raw, path, environ, dialects)[0]


def dialect_name(dialect: Dialect) -> str:
    """A dialect's name: its ``dialect_name`` attribute, else its module and name."""
    name = getattr(dialect, "dialect_name", None)
    if isinstance(name, str) and name:
        return name
    return f"{getattr(dialect, '__module__', '?')}.{getattr(dialect, '__qualname__', '?')}"


def translate_dialects(raw: dict[str, Any], path: Path, environ: Mapping[str, str],
                       dialects: tuple[Dialect, ...]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """(``raw`` passed through each dialect in turn, the names of the dialects it is
    written in: those whose ``claims(raw, translated)`` says so, else those that changed
    it; this tool's own configs pass every dialect unchanged)."""
    claimed: list[str] = []
    for dialect in dialects:
        out = dialect(raw, path, environ)
        claims = getattr(dialect, "claims", None)  # (raw, translated) -> written in it
        if claims(raw, out) if callable(claims) else out != raw:
            claimed.append(dialect_name(dialect))
        raw = out
    return raw, tuple(claimed)
