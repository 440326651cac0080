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

Private: the folder is created 0700 and the database files are 0600 (every eval's model
replies are in them). Versioned: a database whose ``meta.schema_version`` or ``calls``
columns are not this version's is refused at open with one line and a hint (``orchestrate
cache clear`` empties it into this version's schema), never used cell by cell. Checked on
read: a caller passes the shape its value must have; a stored value of another shape is a
miss (called again and overwritten), never replayed as an answer.
"""

from __future__ import annotations

import contextlib
import json
import math
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
from eval_harness.errors import UsageError

FILE_NAME = "calls.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, provider TEXT, model TEXT,
    created REAL NOT NULL, cost_usd REAL, latency_s REAL, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""
#: the ``calls`` columns of SCHEMA_VERSION, in order
_COLUMNS = ("key", "kind", "provider", "model", "created", "cost_usd", "latency_s", "value")
#: the private modes of the folder (when we create it) and of every database file
DIR_MODE, FILE_MODE = 0o700, 0o600


class CacheSchemaError(UsageError):
    """The database was written by another version of this tool (exit 2, nothing run)."""


def _found_schema(conn: sqlite3.Connection) -> tuple[str | None, tuple[str, ...]]:
    """(meta's schema_version or None, the ``calls`` column names)."""
    columns = tuple(r[1] for r in conn.execute("PRAGMA table_info(calls)").fetchall())
    try:
        row = conn.execute("SELECT v FROM meta WHERE k = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table (or not ours)
        row = None
    return (str(row[0]) if row else None), columns


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a database of another schema, in one line with the way out."""
    version, columns = _found_schema(conn)
    if version == str(SCHEMA_VERSION) and columns == _COLUMNS:
        return
    what = (f"schema version {version}" if version not in (None, str(SCHEMA_VERSION))
            else "a calls table of another shape")
    raise CacheSchemaError(
        f"the model-call cache {path} has {what}; this version of eval-harness reads "
        f"schema version {SCHEMA_VERSION}",
        hint=f"`orchestrate cache clear --cache-dir {path.parent}` empties it into this "
             "version's schema; or pass --cache-dir DIR for another folder, or --no-cache")


def _reset_schema(conn: sqlite3.Connection) -> None:
    """Drop a foreign schema's tables (``cache clear`` on another version's database)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DROP TABLE IF EXISTS calls")
        conn.execute("DROP TABLE IF EXISTS meta")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _private_file(path: Path) -> None:
    """Create ``path`` 0600 if absent; make it 0600 if it is ours and looser."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        return
    except FileExistsError:
        pass
    try:
        st = path.lstat()
        if st.st_uid == os.getuid() and st.st_mode & 0o777 != FILE_MODE:
            os.chmod(path, FILE_MODE)
    except OSError:
        pass  # a read-only folder or another user's file: reading still works


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
                 refresh: bool = False, reset_foreign_schema: bool = False) -> None:
        self.directory = directory
        self.path = directory / FILE_NAME
        self.expire_s = expire_s
        self.refresh = refresh
        self.counts = SessionCounts()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []
        if not directory.is_dir():
            directory.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # another process made it meanwhile
                directory.mkdir(mode=DIR_MODE)
        #: the HMAC key of credentials in call keys (eval_harness.cache.keys)
        self.identity_secret = identity_secret(directory)
        for name in (FILE_NAME, FILE_NAME + "-wal", FILE_NAME + "-shm"):
            if name == FILE_NAME or (directory / name).exists():
                _private_file(directory / name)
        conn = self._conn()
        with self._lock:
            version, columns = _found_schema(conn)
            if columns or version is not None:  # an existing database: is it ours?
                if reset_foreign_schema and (version, columns) != (str(SCHEMA_VERSION),
                                                                   _COLUMNS):
                    _patiently(lambda: _reset_schema(conn))
                else:
                    _check_schema(conn, self.path)
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

    def get(self, key: str, shape: Callable[[dict[str, Any]], bool] | None = None
            ) -> Hit | None:
        """The live entry for ``key`` (None when absent, expired, refreshing or not of
        ``shape``); counts the lookup, and a hit's cost as saved."""
        hit = None if self.refresh else self.peek(key, shape)
        with self._lock:
            self.counts.lookups += 1
            if hit is not None:
                self.counts.hits += 1
                self.counts.saved_usd += hit.cost_usd or 0.0
        return hit

    def peek(self, key: str, shape: Callable[[dict[str, Any]], bool] | None = None
             ) -> Hit | None:
        """The live entry, without counting it. ``shape`` says whether a stored value is
        one the caller can use: one it refuses (or raises on) is a miss."""
        row = self._conn().execute(
            "SELECT value, cost_usd, latency_s, created FROM calls WHERE key = ?",
            (key,)).fetchone()
        if row is None:
            return None
        if not isinstance(row[3], (int, float)):
            return None
        if self.expire_s is not None and row[3] < time.time() - self.expire_s:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:  # never written by us; treat as absent (it is overwritten)
            return None
        if not isinstance(value, dict):
            return None
        if shape is not None:
            try:
                if not shape(value):
                    return None
            except Exception:  # a check that cannot read it: not usable
                return None
        cost = row[1] if isinstance(row[1], (int, float)) and not isinstance(row[1], bool) \
            and math.isfinite(row[1]) and row[1] >= 0 else None
        latency = row[2] if isinstance(row[2], (int, float)) and math.isfinite(row[2]) \
            else None
        return Hit(value, cost, latency, row[3])

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
