"""The SQLite call cache: threads, two processes, a killed writer, expiry, refresh, keys."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from eval_harness._util.durations import parse_duration
from eval_harness.cache.keys import call_key, public_endpoint
from eval_harness.cache.settings import resolve
from eval_harness.cache.store import CallCache

WRITER = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    from eval_harness.cache.store import CallCache
    cache = CallCache(Path(sys.argv[1]))
    tag, n = sys.argv[2], int(sys.argv[3])
    def work(t):
        for i in range(n):
            cache.put(f"{tag}-{t}-{i}", kind="runner", provider="p", model="m",
                      value={"output": "x" * 2000, "i": i}, cost_usd=0.001, latency_s=0.1)
            assert cache.peek(f"{tag}-{t}-{i}") is not None
            if t == 0 and i == 50:
                print("ready", flush=True)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    [t.start() for t in threads]; [t.join() for t in threads]
""")


def _writer(tmp: Path, tag: str, n: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(tmp), tag, str(n)],
                            stdout=subprocess.PIPE, text=True)


def test_two_processes_with_four_threads_each_never_corrupt_it(tmp_path: Path) -> None:
    procs = [_writer(tmp_path, tag, 150) for tag in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    db = sqlite3.connect(tmp_path / "calls.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT COUNT(*) FROM calls").fetchone() == (2 * 4 * 150,)


def test_a_killed_writers_cache_is_readable(tmp_path: Path) -> None:
    proc = _writer(tmp_path, "k", 100_000)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    cache = CallCache(tmp_path)  # replays the WAL the dead process left
    stats = cache.stats()
    assert stats["entries"] >= 51
    assert cache.peek("k-0-50") is not None and cache.peek("k-0-50").value["i"] == 50
    db = sqlite3.connect(tmp_path / "calls.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_threads_share_one_cache_object(tmp_path: Path) -> None:
    cache = CallCache(tmp_path)

    def work(t: int) -> None:
        for i in range(50):
            cache.put(f"{t}-{i}", kind="judge", provider="p", model="m", value={"v": i},
                      cost_usd=0.5, latency_s=None)
            assert cache.get(f"{t}-{i}") is not None

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.counts.hits == cache.counts.lookups == 300
    assert cache.counts.line() == "300 of 300 calls from cache, $150.00 saved"
    assert cache.stats()["by_model"] == [{"kind": "judge", "provider": "p", "model": "m",
                                          "entries": 300, "stored_cost_usd": 150.0}]
    assert cache.clear() == 300 and cache.stats()["entries"] == 0


def test_expiry_and_refresh(tmp_path: Path) -> None:
    cache = CallCache(tmp_path)
    cache.put("k", kind="runner", provider="p", model="m", value={"a": 1}, cost_usd=None,
              latency_s=1.0)
    db = sqlite3.connect(tmp_path / "calls.sqlite3")
    db.execute("UPDATE calls SET created = ?", (time.time() - 8 * 86400,))
    db.commit()
    assert cache.get("k") is not None
    assert CallCache(tmp_path, expire_s=parse_duration("7d")).get("k") is None
    assert CallCache(tmp_path, refresh=True).get("k") is None
    assert CallCache(tmp_path).clear(older_than_s=86400) == 1


def test_keys_separate_replications_and_credentials() -> None:
    base = dict(kind="runner", provider="openai", model="m", request={"messages": ["hi"]},
                secret=b"k" * 32)
    k1 = call_key(endpoint="https://api.x/v1/chat?key=sk-1", replication=1, private={}, **base)
    assert k1 != call_key(endpoint="https://api.x/v1/chat?key=sk-2", replication=1,
                          private={}, **base)  # a key in the query selects the account
    assert k1 != call_key(endpoint="https://api.x/v1/chat?key=sk-1", replication=2,
                          private={}, **base)
    h1 = call_key(endpoint="https://api.x/v1/chat", replication=1,
                  private={"header:authorization": "Bearer sk-1"}, **base)
    assert h1 != call_key(endpoint="https://api.x/v1/chat", replication=1,
                          private={"header:authorization": "Bearer sk-2"}, **base)
    assert h1 == call_key(endpoint="https://api.x/v1/chat", replication=1,
                          private={"header:authorization": "Bearer sk-1"}, **base)
    assert h1 != call_key(endpoint="https://api.x/v1/chat", replication=1,  # another cache
                          private={"header:authorization": "Bearer sk-1"},
                          **{**base, "secret": b"j" * 32})
    assert public_endpoint("http://a:b@h:8080/v1/?k=s#f") == "http://h:8080/v1"


def test_identity_secret_is_private_and_stable(tmp_path: Path) -> None:
    first = CallCache(tmp_path).identity_secret
    assert len(first) == 32 and CallCache(tmp_path).identity_secret == first
    assert (tmp_path / "identity.key").stat().st_mode & 0o777 == 0o600


def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVAL_HARNESS_CACHE_DIR", str(tmp_path / "env"))
    assert resolve().directory == tmp_path / "env"
    monkeypatch.delenv("EVAL_HARNESS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve().directory == tmp_path / "xdg" / "eval_harness"
    assert resolve(flag_dir=str(tmp_path / "f")).directory == tmp_path / "f"
    monkeypatch.setenv("EVAL_HARNESS_CACHE", "off")
    assert resolve().open() is None
    with pytest.raises(ValueError):
        parse_duration("seven days")
    assert parse_duration("12h") == 43200 and parse_duration(90) == 90


def _open_at(args: tuple[str, float]) -> str | None:
    directory, start = args
    while time.time() < start:  # every process opens the fresh file at the same moment
        pass
    try:
        CallCache(Path(directory)).close()
    except Exception as exc:  # the result under test
        return repr(exc)
    return None


def test_processes_opening_a_new_cache_together_all_succeed(tmp_path: Path) -> None:
    # before the fix 2 rounds in 30 had a process fail with "database is locked" (SQLite
    # fails at once, without the busy timeout, while processes switch a new file to WAL)
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(6) as pool:
        for r in range(12):
            start = time.time() + 0.1
            errors = [e for e in pool.map(_open_at, [(str(tmp_path / f"c{r}"), start)] * 6) if e]
            assert errors == [], (r, errors)


def test_a_lock_sqlite_does_not_wait_for_is_waited_for() -> None:
    from eval_harness.cache import store

    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")

    store._patiently(step)
    assert len(calls) == 3

    def broken() -> None:
        raise sqlite3.OperationalError("no such table: calls")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        store._patiently(broken)
