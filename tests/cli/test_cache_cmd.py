"""``orchestrate cache stats|clear``."""
from __future__ import annotations

import json
import time
from pathlib import Path

from eval_harness.cache.store import CallCache


def _fill(directory: Path) -> None:
    cache = CallCache(directory)
    for i in range(3):
        cache.put(f"k{i}", kind="runner", provider="openai", model="gpt-4o", value={"i": i},
                  cost_usd=0.25, latency_s=1.0)
    cache.put("old", kind="judge", provider="anthropic", model="claude-haiku-4-5",
              value={}, cost_usd=None, latency_s=None)
    cache._conn().execute("UPDATE calls SET created = ? WHERE key = 'old'",
                          (time.time() - 10 * 86400,))
    cache.close()


def test_stats_and_clear(cli, _private_call_cache: Path) -> None:
    _fill(_private_call_cache)
    code, out, _ = cli("cache", "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["entries"] == 4 and stats["stored_cost_usd"] == 0.75
    code, out, _ = cli("cache", "stats")
    assert "4 cached call(s)" in out and "runner openai:gpt-4o: 3 ($0.75)" in out
    code, out, _ = cli("cache", "clear", "--older-than", "7d")
    assert code == 0 and "removed 1 cached call(s) (older than 7d)" in out
    code, out, _ = cli("cache", "clear")
    assert "removed 3" in out
    assert json.loads(cli("cache", "stats", "--json")[1])["entries"] == 0


def test_bad_age_and_missing_cache(cli, tmp_path: Path) -> None:
    code, _, err = cli("cache", "clear", "--older-than", "a while")
    assert code == 2 and "--older-than" in err
    code, out, _ = cli("cache", "stats", "--cache-dir", str(tmp_path / "none"))
    assert code == 0 and "no model-call cache" in out
