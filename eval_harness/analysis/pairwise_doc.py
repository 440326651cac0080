"""Read a ``pairwise.json`` found beside runs (``--analyze-only``): untrusted, any shape.

The reports read ``judges.<name>.pairs[].{a, b, levels_a, levels_b, summary}``; a file
that is not JSON, nested too deep, not an object, or whose pairs have other shapes used to
be an internal error (JSONDecodeError, TypeError). :func:`read_pairwise` keeps the
well-formed pairs, drops the rest and says how many, or returns no document with a reason.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from eval_harness._util.atomic_files import read_json

_COUNTS = ("n", "wins", "ties", "losses", "errored", "inconsistent")
_RATES = ("win_rate", "sign_test_p")


def _summary(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    out: dict[str, Any] = {}
    for key in _COUNTS:
        v = raw.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            return None
        out[key] = v
    for key in _RATES:
        v = raw.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not math.isfinite(v) or not 0 <= v <= 1):
            return None
        out[key] = v
    return out


def _pair(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("a", "b")):
        return None
    summary = _summary(raw.get("summary"))
    if summary is None:
        return None
    levels: list[Any] = [raw.get(k) if isinstance(raw.get(k), dict) else {}
                         for k in ("levels_a", "levels_b")]
    return {"a": raw["a"], "b": raw["b"], "levels_a": levels[0], "levels_b": levels[1],
            "summary": summary}


def read_pairwise(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the cleaned document, a note on what was dropped or why it is unusable)."""
    doc = read_json(path)  # None: unreadable, not JSON, nested too deep, not a regular file
    if not isinstance(doc, dict) or not isinstance(doc.get("judges"), dict):
        return None, f"{path}: not a pairwise results file (unreadable, not JSON or no " \
                     "`judges` mapping); ignored"
    judges: dict[str, Any] = {}
    dropped = 0
    for name, block in doc["judges"].items():
        raw_pairs = block.get("pairs") if isinstance(block, dict) else None
        pairs = [p for p in map(_pair, raw_pairs if isinstance(raw_pairs, list) else [])
                 if p is not None]
        dropped += (len(raw_pairs) if isinstance(raw_pairs, list) else 1) - len(pairs)
        model = block.get("model") if isinstance(block, dict) else None
        judges[str(name)] = {"model": model if isinstance(model, str) else None, "pairs": pairs}
    note = (f"{path}: {dropped} malformed pairwise entr{'y' if dropped == 1 else 'ies'} "
            "ignored") if dropped else None
    return {"schema_version": 1, "judges": judges}, note
