"""What the user points at, hashed into the config digest: editing the agent reruns its cells.

A run is skipped as complete only when its record carries the current config digest
(:mod:`eval_harness.matrix.effective`). Editing the agent's code changed nothing in the
config, so a rerun used to say "80 already complete" and a baseline gate passed on stale
results. The digest now also covers the content (SHA-256) of:

- every argument of a ``cli`` command that names an existing file inside the config's
  directory tree (``python3 agent.py``, ``--script=tools/run.sh``); files outside it, such
  as the interpreter, are left out (list them under ``fingerprint:`` to include them);
- the source file of a ``python`` runner's module (``module:function``), found under the
  config directory without importing it;
- every file matched by the config's ``fingerprint:`` list of paths / globs (relative to
  the config file; ``**`` recurses). A pattern matching no file is a config error.

Paths are recorded relative to the config directory, so moving the checkout changes nothing.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError

_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (first 16 digits)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()[:16]


def _inside(base: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(base.resolve())
    except (ValueError, OSError):
        return False
    return True


def _command_files(cfg: EvalConfig, base: Path) -> list[Path]:
    runner = cfg.runner
    if runner is None or runner.type != "cli" or not runner.command:
        return []
    try:
        tokens = (shlex.split(runner.command) if isinstance(runner.command, str)
                  else [str(t) for t in runner.command])
    except ValueError:  # unbalanced quotes: the runner reports it
        return []
    out = []
    for token in tokens:
        for part in (token, token.partition("=")[2]):
            if not part or "{" in part:
                continue
            path = Path(part) if Path(part).is_absolute() else base / part
            if path.is_file() and _inside(base, path):
                out.append(path)
    return out


def _module_files(cfg: EvalConfig, base: Path) -> list[Path]:
    runner = cfg.runner
    if runner is None or runner.type != "python" or not runner.function:
        return []
    module = runner.function.partition(":")[0].replace(".", "/")
    for candidate in (base / f"{module}.py", base / module / "__init__.py"):
        if candidate.is_file():
            return [candidate]
    return []


def _pattern_files(patterns: list[str], base: Path) -> list[Path]:
    out: list[Path] = []
    for i, pattern in enumerate(patterns):
        path = Path(pattern)
        if path.is_absolute():
            matches = [path] if path.is_file() else sorted(
                p for p in Path(path.anchor).glob(str(path.relative_to(path.anchor))) if p.is_file())
        else:
            direct = base / pattern
            matches = [direct] if direct.is_file() else sorted(
                p for p in base.glob(pattern) if p.is_file())
        if not matches:
            raise ConfigError(f"`{pattern}` matches no file", path=f"fingerprint[{i}]",
                              hint="paths and globs are relative to the config file")
        out.extend(matches)
    return out


def agent_fingerprint(cfg: EvalConfig, base: Path) -> dict[str, str]:
    """{path relative to the config dir (or absolute): content hash} of what the agent is."""
    files = [*_command_files(cfg, base), *_module_files(cfg, base),
             *_pattern_files(list(cfg.fingerprint or []), base)]
    out: dict[str, str] = {}
    for path in files:
        try:
            key = str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            key = str(path.resolve())
        if key not in out:
            out[key] = file_sha256(path)
    return dict(sorted(out.items()))


def changed_files(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """``path (changed|new|removed)`` for every difference, sorted by path."""
    out = []
    for key in sorted(set(before) | set(now)):
        if key not in before:
            out.append(f"{key} (new)")
        elif key not in now:
            out.append(f"{key} (removed)")
        elif before[key] != now[key]:
            out.append(f"{key} (changed)")
    return out
