"""JSON Lines reading shared by datasets and calibration labels."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eval_harness.errors import ConfigError


def read_jsonl(path: Path, error: type[ConfigError] = ConfigError) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; a malformed line raises
    ``error`` naming the file and line."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"invalid JSON: {exc.msg}", file=str(path), line=n) from None
