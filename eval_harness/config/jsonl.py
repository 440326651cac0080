"""JSON Lines reading shared by datasets and calibration labels."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eval_harness.errors import ConfigError
from eval_harness.regular import open_regular


def read_jsonl(path: Path, error: type[ConfigError] = ConfigError) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; a malformed line raises
    ``error`` naming the file and line."""
    try:
        with os.fdopen(open_regular(path), "rb") as fh:  # never a FIFO or a device
            data = fh.read()
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"not UTF-8 text (byte {exc.start + 1} of the line)", file=str(path),
                        line=n, hint="save the file as UTF-8") from None
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"invalid JSON: {exc.msg}", file=str(path), line=n) from None
        except RecursionError:
            raise error("JSON nested too deep to read", file=str(path), line=n,
                        hint="flatten the value") from None
