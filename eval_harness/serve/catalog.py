"""The evals under the served roots, and a cheap change token for each.

An *eval* is a folder holding run directories (``runs/<eval>/``), this tool's or
agent-eval-harness's layout (``analysis.loading.discover``). URL parameters name an eval by its
key in this catalog, never by a path, so no request can reach a folder outside the roots.

Change token: the (mtime_ns, size) of each run's ``run.json`` / ``summary.yaml`` /
``run_result.json`` and ``cases/`` folder, plus, for runs still running, the mtime of each
case folder (a finished case writes ``record.json`` inside its folder, which changes that
folder's mtime, not ``cases/``'s). That *full pass* costs O(runs) (4 ``stat`` calls and a
``run.json`` read per run: seconds with 10,000 runs), so it is not what each poll does:
between full passes the token is the eval folder's mtime (a new run appears there, and
every status change of a run touches it: ``store.rundirs.update_run_json``) plus the
full-pass data of the runs that were running (their progress). A full pass runs again when
the eval folder changes, its runs change, or ``FULL_PASS_S`` has passed (a change no
writer announced, e.g. another tool's layout, shows within that time).

Catalog: re-walking every root is O(runs) too; it is redone only when one of the folders
the last walk scanned (roots, eval folders, the folders between) changed its mtime — a new
run or eval is a new entry in one of them — so a repeat request costs O(folders) stats.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from eval_harness._util.atomic_files import read_json
from eval_harness.analysis.loading.discover import RunDir, find_run_dirs

_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
# labels.jsonl is not watched: a new label must not make the whole eval be re-analysed
_WATCHED = ("run.json", "summary.yaml", "run_result.json", "cases")
#: the catalog (which run directories exist) is re-walked at most this often
REWALK_S = 2.0


@dataclass(frozen=True)
class EvalEntry:
    """One eval: a folder of run directories."""

    key: str  #: URL-safe, unique in the catalog
    path: Path
    runs: tuple[RunDir, ...]


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


def _running(run: RunDir) -> bool:
    if run.layout != "native":
        return False
    rec = read_json(os.path.join(run.path, "run.json"))
    return not isinstance(rec, dict) or rec.get("status") in (None, "running")


def _run_part(run: RunDir, running: bool) -> bytes:
    """What the token hashes of one run: its watched files' stats, and for a running run
    each case folder's mtime."""
    parts = [run.path.encode()]
    for name in _WATCHED:
        parts.append(repr(_stat(os.path.join(run.path, name))).encode())
    if running:
        try:
            with os.scandir(os.path.join(run.path, "cases")) as it:
                for e in it:
                    parts.append(e.name.encode() + repr(e.stat().st_mtime_ns).encode())
        except OSError:
            pass
    return b"\0".join(parts)


#: a full pass of an eval's token at least this often, whatever its folder says
FULL_PASS_S = 30.0


@dataclass
class _TokenState:
    runs: tuple[RunDir, ...]
    folder: tuple[int, int]
    at: float
    rest: bytes  #: digest of the runs that were not running at the full pass
    running: tuple[RunDir, ...]


_tokens: dict[str, _TokenState] = {}
_tokens_lock = threading.Lock()


def change_token(entry: EvalEntry) -> str:
    """A digest that changes whenever a run of ``entry`` is written to: O(running runs)
    between full passes (module docstring)."""
    key = os.fspath(entry.path)
    folder = _stat(key)
    with _tokens_lock:
        state = _tokens.get(key)
    now = time.monotonic()
    if (state is None or state.runs != entry.runs or state.folder != folder
            or now - state.at > FULL_PASS_S):
        rest = hashlib.blake2b(digest_size=12)
        running = []
        for run in entry.runs:
            if _running(run):
                running.append(run)
            else:
                rest.update(_run_part(run, False))
        state = _TokenState(entry.runs, folder, now, rest.digest(), tuple(running))
        with _tokens_lock:
            _tokens[key] = state
    h = hashlib.blake2b(state.rest, digest_size=12)
    h.update(repr(folder).encode())
    for run in state.running:
        h.update(_run_part(run, True))
    return h.hexdigest()


class Catalog:
    """The served roots' evals; re-walked when older than ``REWALK_S`` seconds and one of
    the folders the last walk scanned has changed."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self._lock = threading.Lock()
        self._entries: dict[str, EvalEntry] = {}
        self._walked = 0.0
        self._folders: dict[str, int] = {}
        self.skipped: list[str] = []

    def entries(self) -> dict[str, EvalEntry]:
        """key -> eval, in path order."""
        with self._lock:
            if time.monotonic() - self._walked > REWALK_S:
                if not self._folders or any(_stat(f)[0] != m for f, m in self._folders.items()):
                    self._entries = self._walk()
                self._walked = time.monotonic()
            return self._entries

    def get(self, key: str) -> EvalEntry | None:
        """The eval named ``key``, or None (an unknown or malformed key)."""
        return self.entries().get(key)

    def _walk(self) -> dict[str, EvalEntry]:
        skipped: list[str] = []
        folders: dict[str, int] = {}
        groups: dict[str, list[RunDir]] = {}
        for run in find_run_dirs(self.roots, skipped, folders):
            groups.setdefault(os.path.dirname(os.path.normpath(run.path)), []).append(run)
        self._folders = folders  # each one's mtime before it was scanned
        self.skipped = skipped
        out: dict[str, EvalEntry] = {}
        for folder, runs in sorted(groups.items()):
            base = _SLUG.sub("-", os.path.basename(folder)).strip("-.") or "eval"
            key, n = base, 2
            while key in out:
                key, n = f"{base}-{n}", n + 1
            out[key] = EvalEntry(key, Path(folder), tuple(runs))
        return out
