"""One SQLite file of cached model calls, safe for many threads and several processes.

Layout (``<cache-dir>/calls.sqlite3``, schema version 1)::

    calls(key TEXT PRIMARY KEY,   -- sha256 of the request (eval_harness.cache.keys)
          kind TEXT,              -- "runner" | "judge"
          provider TEXT, model TEXT,
          created REAL,           -- unix time the reply was stored
          cost_usd REAL, latency_s REAL,
          value TEXT)             -- JSON: the reply, its usage, cost and latency

Why it is safe to share: the database runs in WAL mode (readers never block the one
writer, a crash leaves a WAL that the next open replays), each thread has its own
connection, and every statement waits up to ``busy_timeout`` for another process's write
lock instead of failing. Each write is one autocommitted ``INSERT OR REPLACE``: a killed
process loses at most the reply it was writing, never the file.
Values pass through :func:`eval_harness._util.redact.redact` before they are stored, so a
registered secret echoed by a server is masked in the cache too.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_harness._util.redact import redact
from eval_harness.cache.keys import identity_secret

FILE_NAME = "calls.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, provider TEXT, model TEXT,
    created REAL NOT NULL, cost_usd REAL, latency_s REAL, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Hit:
    """A stored reply."""

    value: dict[str, Any]
    cost_usd: float | None
    latency_s: float | None
    created: float


@dataclass
class SessionCounts:
    """What this process asked of the cache (the console summary line)."""

    lookups: int = 0
    hits: int = 0
    saved_usd: float = 0.0

    def line(self) -> str:
        """``312 of 512 calls from cache, $4.10 saved``."""
        return (f"{self.hits} of {self.lookups} calls from cache, "
                f"${self.saved_usd:,.2f} saved")


def _patiently(step: Callable[[], object]) -> None:
    """Run `step`, again while SQLite answers "database is locked" at once, up to
    BUSY_TIMEOUT_MS. The busy timeout does not cover every lock: SQLite fails at once
    where waiting could deadlock (a read transaction that wants to write while another
    holds the write lock) and while several processes open a new file and switch it to
    WAL together (two concurrent shards sharing one cache failed so, 2 rounds in 30 of
    8 processes opening a fresh directory)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.2)


def _create_schema(conn: sqlite3.Connection) -> None:
    """The tables and the schema version, in one write transaction taken up front
    (BEGIN IMMEDIATE waits for the write lock; a deferred one could not upgrade)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in filter(str.strip, _SCHEMA.split(";")):
            conn.execute(statement)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                     (str(SCHEMA_VERSION),))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class CallCache:
    """The cache file; ``expire_s`` (None: never) ages entries out of lookups, ``refresh``
    skips reads (every call is made again and overwrites its entry)."""

    def __init__(self, directory: Path, *, expire_s: float | None = None,
                 refresh: bool = False) -> None:
        self.directory = directory
        self.path = directory / FILE_NAME
        self.expire_s = expire_s
        self.refresh = refresh
        self.counts = SessionCounts()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []
        directory.mkdir(parents=True, exist_ok=True)
        #: the HMAC key of credentials in call keys (eval_harness.cache.keys)
        self.identity_secret = identity_secret(directory)
        conn = self._conn()
        with self._lock:
            _patiently(lambda: _create_schema(conn))

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            _patiently(lambda: conn.execute("PRAGMA journal_mode=WAL"))
            conn.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; WAL-safe
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def get(self, key: str) -> Hit | None:
        """The live entry for ``key`` (None when absent, expired or refreshing); counts
        the lookup, and a hit's cost as saved."""
        hit = None if self.refresh else self.peek(key)
        with self._lock:
            self.counts.lookups += 1
            if hit is not None:
                self.counts.hits += 1
                self.counts.saved_usd += hit.cost_usd or 0.0
        return hit

    def peek(self, key: str) -> Hit | None:
        """The live entry, without counting it."""
        row = self._conn().execute(
            "SELECT value, cost_usd, latency_s, created FROM calls WHERE key = ?",
            (key,)).fetchone()
        if row is None:
            return None
        if self.expire_s is not None and row[3] < time.time() - self.expire_s:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:  # never written by us; treat as absent (it is overwritten)
            return None
        return Hit(value, row[1], row[2], row[3]) if isinstance(value, dict) else None

    def put(self, key: str, *, kind: str, provider: str, model: str,
            value: dict[str, Any], cost_usd: float | None, latency_s: float | None) -> None:
        """Store (or replace) one reply."""
        text = redact(json.dumps(value, ensure_ascii=False, default=str, sort_keys=True))
        self._conn().execute(
            "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (key, kind, provider, model, time.time(), cost_usd, latency_s, text))

    def stats(self) -> dict[str, Any]:
        """Entries by kind and model, stored cost, age range and file size."""
        conn = self._conn()
        total, cost, oldest, newest = conn.execute(
            "SELECT COUNT(*), SUM(cost_usd), MIN(created), MAX(created) FROM calls").fetchone()
        rows = conn.execute("SELECT kind, provider, model, COUNT(*), SUM(cost_usd) FROM calls "
                            "GROUP BY kind, provider, model ORDER BY 4 DESC").fetchall()
        size = sum(p.stat().st_size for p in self.directory.glob(FILE_NAME + "*")
                   if p.is_file())
        return {"path": str(self.path), "entries": total, "stored_cost_usd": cost or 0.0,
                "oldest": oldest, "newest": newest, "bytes": size,
                "expire_s": self.expire_s,
                "by_model": [{"kind": k, "provider": p, "model": m, "entries": n,
                              "stored_cost_usd": c or 0.0} for k, p, m, n, c in rows]}

    def clear(self, older_than_s: float | None = None) -> int:
        """Delete every entry (or those older than ``older_than_s``); the number removed."""
        conn = self._conn()
        if older_than_s is None:
            removed = conn.execute("DELETE FROM calls").rowcount
        else:
            removed = conn.execute("DELETE FROM calls WHERE created < ?",
                                   (time.time() - older_than_s,)).rowcount
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if older_than_s is None:
            conn.execute("VACUUM")
        return int(removed)

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()


def default_dir(env: dict[str, str] | None = None) -> Path:
    """``$EVAL_HARNESS_CACHE_DIR``, else ``$XDG_CACHE_HOME/eval_harness``, else
    ``~/.cache/eval_harness``."""
    environ = os.environ if env is None else env
    explicit = environ.get("EVAL_HARNESS_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "eval_harness"
