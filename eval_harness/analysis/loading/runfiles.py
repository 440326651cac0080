"""Small readers every run format shares: a JSON object from run data, the error that
leaves a run out, and the natural sort order of run ids."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from eval_harness.store.confine import open_run_file


class UnreadableRun(ValueError):
    """A run's metadata file exists but cannot be read (torn, hand-edited, not JSON/YAML)."""


def levels_key(levels: Mapping[str, Any]) -> str:
    """The text a condition id hashes (DESIGN.md): identifies a condition by its levels."""
    return json.dumps(levels, sort_keys=True, default=str)


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key treating digit runs as numbers (`r2` < `r10`)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def read_json_object(path: str) -> dict[str, Any]:
    """A JSON file's object; {} when the file is missing. Raises :class:`UnreadableRun`
    when it exists but is not a JSON object (the loader leaves that run out, with a note)."""
    try:
        with open_run_file(path, "r", encoding="utf-8") as fh:  # a symlink is refused
            data = json.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # ValueError: JSON and UTF-8 decoding errors
        raise UnreadableRun(f"{os.path.basename(path)}: {exc}") from None
    except RecursionError:  # a file nested thousands deep (hostile run data)
        raise UnreadableRun(f"{os.path.basename(path)}: JSON nested too deep") from None
    if not isinstance(data, dict):
        raise UnreadableRun(f"{os.path.basename(path)}: not a JSON object")
    return data
