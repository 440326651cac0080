"""Helpers of the dashboard tests."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


def ready(app: Any) -> None:
    """Wait for the first analysis of every eval (pages then render at once)."""
    for entry in app.dash.catalog.entries().values():
        got = app.dash.cache.lookup(entry, wait_s=120)
        assert got.data is not None, got.error


def token_of(html: str) -> str:
    """The session's write token from a page's <meta name="csrf-token">."""
    m = re.search(r'<meta name="csrf-token" content="([0-9a-f]+)"', html)
    assert m, "page without a csrf token"
    return m.group(1)


def tree_digest(root: Path, skip: tuple[str, ...] = ("labels.jsonl", ".labels.lock")) -> str:
    """SHA-256 over every file's path and bytes under ``root`` (except ``skip``)."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name not in skip):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
