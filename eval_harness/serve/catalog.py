"""The evals under the served roots, and a cheap change token for each.

An *eval* is a folder holding run directories (``runs/<eval>/``), this tool's or
agent-eval-harness's layout (``analysis.loading.discover``). URL parameters name an eval by its
key in this catalog, never by a path, so no request can reach a folder outside the roots.

Change token: the (mtime_ns, size) of each run's ``run.json`` / ``summary.yaml`` /
``run_result.json`` and ``cases/`` folder, plus, for runs still running, the mtime of each
case folder (a finished case writes ``record.json`` inside its folder, which changes that
folder's mtime, not ``cases/``'s). A complete run costs 4 ``stat`` calls; a token over
48 complete runs takes well under a millisecond.
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


def change_token(entry: EvalEntry) -> str:
    """A digest that changes whenever a run of ``entry`` is written to."""
    h = hashlib.blake2b(digest_size=12)
    for run in entry.runs:
        h.update(run.path.encode())
        for name in _WATCHED:
            h.update(repr(_stat(os.path.join(run.path, name))).encode())
        if _running(run):
            try:
                with os.scandir(os.path.join(run.path, "cases")) as it:
                    for e in it:
                        h.update(e.name.encode() + repr(e.stat().st_mtime_ns).encode())
            except OSError:
                pass
    return h.hexdigest()


class Catalog:
    """The served roots' evals; re-walked when older than ``REWALK_S`` seconds."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self._lock = threading.Lock()
        self._entries: dict[str, EvalEntry] = {}
        self._walked = 0.0
        self.skipped: list[str] = []

    def entries(self) -> dict[str, EvalEntry]:
        """key -> eval, in path order."""
        with self._lock:
            if time.monotonic() - self._walked > REWALK_S:
                self._entries = self._walk()
                self._walked = time.monotonic()
            return self._entries

    def get(self, key: str) -> EvalEntry | None:
        """The eval named ``key``, or None (an unknown or malformed key)."""
        return self.entries().get(key)

    def _walk(self) -> dict[str, EvalEntry]:
        skipped: list[str] = []
        groups: dict[str, list[RunDir]] = {}
        for run in find_run_dirs(self.roots, skipped):
            groups.setdefault(os.path.dirname(os.path.normpath(run.path)), []).append(run)
        self.skipped = skipped
        out: dict[str, EvalEntry] = {}
        for folder, runs in sorted(groups.items()):
            base = _SLUG.sub("-", os.path.basename(folder)).strip("-.") or "eval"
            key, n = base, 2
            while key in out:
                key, n = f"{base}-{n}", n + 1
            out[key] = EvalEntry(key, Path(folder), tuple(runs))
        return out
