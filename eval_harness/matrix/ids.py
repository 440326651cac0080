"""Condition ids and labels.

``condition_id`` = first 12 hex digits of SHA-256 over the UTF-8 bytes of
``json.dumps(levels, sort_keys=True, default=str)`` (default separators), exactly as
agent-eval-harness computes it, so ids agree across the two tools.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

#: Version of the id scheme above; recorded in run.json. Changing the scheme must bump it,
#: and the golden ids in tests/matrix/test_ids.py pin the current one.
HASH_VERSION = 1


def condition_id(levels: Mapping[str, Any]) -> str:
    """12-hex id of a level assignment (factor -> recorded level)."""
    payload = json.dumps(dict(levels), sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def _slug(value: Any) -> str:
    text = re.sub(r"[^A-Za-z0-9.]+", "-", str(value)).strip("-.").lower()
    return text or "x"


def condition_label(levels: Mapping[str, Any]) -> str:
    """Readable label for run ids, e.g. ``opus-effort-high``: the model level first and bare,
    then the other factors as ``factor-level`` in sorted order, so it is stable."""
    parts = []
    for name in sorted(levels, key=lambda n: (n != "model", n)):
        value = levels[name]
        parts.append(_slug(value) if name == "model" else f"{_slug(name)}-{_slug(value)}")
    label = "-".join(parts)
    return label[:80].rstrip("-") or "condition"
