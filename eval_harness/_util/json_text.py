"""JSON text for the analysis and report files: readable when small, compact when large.

A file whose compact text is at most :data:`INDENT_MAX_BYTES` is written indented (two
spaces), as people read ``anova.json`` or ``report.json``; a larger one is written compactly
on one line (``","`` and ``":"`` separators). The compact text comes from the C encoder,
which ``json`` only uses without ``indent``; an indented 80 MB document went through the
pure-Python encoder and cost seconds. Both forms parse to the same value (docs/reports.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

INDENT_MAX_BYTES = 1 << 20  # 1 MiB of compact text


def json_text(data: Any, *, ensure_ascii: bool = True, default: Callable[[Any], Any] | None = str,
              indent_max: int = INDENT_MAX_BYTES) -> str:
    """``data`` as JSON plus a newline: indented when the compact text has at most
    ``indent_max`` characters, else compact. NaN/inf raise ``ValueError``."""
    compact = json.dumps(data, ensure_ascii=ensure_ascii, default=default, allow_nan=False,
                         separators=(",", ":"))
    if len(compact) > indent_max:
        return compact + "\n"
    return json.dumps(data, indent=2, ensure_ascii=ensure_ascii, default=default,
                      allow_nan=False) + "\n"


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating its folder: the store's
    temp-file-and-rename writer (:func:`eval_harness._util.atomic_files.atomic_write_bytes`)."""
    from eval_harness._util.atomic_files import atomic_write_bytes
    from eval_harness._util.file_modes import make_dirs

    make_dirs(Path(path).parent)
    atomic_write_bytes(path, text.encode("utf-8"))
