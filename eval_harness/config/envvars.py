"""``${VAR}`` / ``${VAR:-default}`` interpolation in config strings.

Resolved values live only in memory: the raw (uninterpolated) config is what gets printed,
digested and written, so a secret never reaches a file or the terminal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from eval_harness.errors import ConfigError

_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate_string(
    text: str, env: Mapping[str, str], *, where: str = "", file: str | None = None,
    line: int | None = None,
) -> str:
    """Replace ``${VAR}`` and ``${VAR:-default}``; ``$$`` is a literal ``$``."""

    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is not None:
                return default
            raise ConfigError(
                f"environment variable {name} is not set", path=where, file=file, line=line,
                hint=f"export {name}=... or write ${{{name}:-default}}",
            )
        return value

    return _VAR.sub(sub, text)


def env_references(value: Any) -> set[str]:
    """Names of every variable referenced anywhere in ``value``."""
    found: set[str] = set()
    if isinstance(value, str):
        found.update(m.group(1) for m in _VAR.finditer(value) if m.group(1))
    elif isinstance(value, Mapping):
        for v in value.values():
            found |= env_references(v)
    elif isinstance(value, list):
        for v in value:
            found |= env_references(v)
    return found


def interpolate(
    value: Any, env: Mapping[str, str] | None = None, *, path: tuple[str | int, ...] = (),
    lines: Mapping[tuple[str | int, ...], tuple[str, int]] | None = None,
) -> Any:
    """Recursively interpolate every string in ``value`` (keys are left alone)."""
    from eval_harness.config.yamlio import format_path

    env = os.environ if env is None else env
    if isinstance(value, str):
        origin = (lines or {}).get(path)
        return interpolate_string(
            value, env, where=format_path(path), file=origin[0] if origin else None,
            line=origin[1] if origin else None,
        )
    if isinstance(value, Mapping):
        return {k: interpolate(v, env, path=(*path, k), lines=lines) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env, path=(*path, i), lines=lines) for i, v in enumerate(value)]
    return value
