"""JSON and JSON Lines reading of user-supplied files (datasets, labels, a ``--baseline``
file, the analysis output ``orchestrate report`` reads): every failure is ``error`` (a
ConfigError, exit 2) naming the file, never a traceback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eval_harness._util.regular_files import open_regular
from eval_harness.errors import ConfigError


def _read(path: Path, error: type[ConfigError]) -> bytes:
    try:
        with os.fdopen(open_regular(path), "rb") as fh:  # never a FIFO or a device
            return fh.read()
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


def _decode(raw: bytes, path: Path, error: type[ConfigError], line: int | None) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = "of the line" if line else "of the file"
        raise error(f"not UTF-8 text (byte {exc.start + 1} {where})", file=str(path),
                    line=line, hint="save the file as UTF-8") from None


def _loads(text: str, path: Path, error: type[ConfigError], line: int | None,
           hint: str | None = None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"invalid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"
                    if line is None else f"invalid JSON: {exc.msg}",
                    file=str(path), line=line, hint=hint) from None
    except RecursionError:
        raise error("JSON nested too deep to read", file=str(path), line=line,
                    hint="flatten the value") from None


def read_json_file(path: Path, error: type[ConfigError] = ConfigError, *,
                   hint: str | None = None) -> Any:
    """The parsed JSON document in ``path``; unreadable, not UTF-8, invalid JSON or nested
    too deep raises ``error`` naming the file (``hint`` for invalid JSON)."""
    return _loads(_decode(_read(path, error), path, error, None), path, error, None, hint)


def read_jsonl(path: Path, error: type[ConfigError] = ConfigError) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; a malformed line raises
    ``error`` naming the file and line."""
    for n, value in read_jsonl_lines(path, error):
        if isinstance(value, ConfigError):
            raise value
        yield n, value


def read_jsonl_lines(path: Path, error: type[ConfigError] = ConfigError
                     ) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value — or the ``error`` naming that line) for every non-blank
    line: a reader that keeps going past a bad line (the dashboard's). An unreadable file
    raises ``error``."""
    data = _read(path, error)
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            line = _decode(raw, path, error, n)
            if line.strip():
                yield n, _loads(line, path, error, n)
        except ConfigError as exc:
            yield n, exc
