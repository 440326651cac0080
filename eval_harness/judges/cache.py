"""The verdict cache: re-scoring never pays twice for the same judge call.

Key: SHA-256 over JSON of (judge name, judge model, verdict kind and range, system prompt,
user prompt rendered with a fixed fence token, answer text, sample index, requested
temperature and max_tokens). The prompt is the *rendered* prompt, so editing the rubric or
changing the case input misses the cache; the sample index keeps ``samples: N`` draws
distinct; a different temperature or token limit is a different call, so it misses too.
Only valid verdicts are stored: failures are retried next time.

File format (``<runs-dir>/<eval>/judge_cache.jsonl``), one JSON object per line::

    {"key": "<sha256>", "judge": "correct", "value": 4.0, "rationale": "...",
     "meta": {"judge_model": "openai:gpt-4.1-nano", "temperature": 0.0, ...}}

Appends are serialised by a lock; a torn last line (a crash mid-write) is ignored.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from eval_harness._util.file_modes import create_file, make_dirs
from eval_harness._util.redact import redact


def cache_key(*parts: Any) -> str:
    """Stable digest of the parts."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class VerdictCache:
    """In-memory map backed by an append-only JSONL file (or memory only when path is None)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {}
        self.hits = 0
        self.misses = 0
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # torn write
                if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                    self._entries[entry["key"]] = entry

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
            else:
                self.hits += 1
            return entry

    def put(self, key: str, judge: str, value: Any, rationale: str | None,
            meta: dict[str, Any]) -> None:
        """Store a valid verdict."""
        entry = {"key": key, "judge": judge, "value": value, "rationale": rationale, "meta": meta}
        line = redact(json.dumps(entry, ensure_ascii=False, default=str))
        with self._lock:
            self._entries[key] = entry
            if self.path is not None:
                make_dirs(self.path.parent)
                with open(create_file(self.path, append=True), "a", encoding="utf-8") as fh:
                    fh.write(line + "\n")

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
