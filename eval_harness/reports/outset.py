"""The analysis output folder is replaced as one set, never file by file.

Three analyses writing one ``--output`` folder at once, or an analysis killed half-way,
used to leave a reader ``anova.json`` from one analysis beside ``report.json`` from
another, a missing ``comparisons.cases.jsonl`` or a stray ``*.tmp``. Now (docs/reports.md):

1. every file of an analysis is written into a staging folder beside the output,
   ``<parent>/.<name>.<pid>.<random>.tmp``;
2. when all are written, under a lock (``<parent>/.<name>.lock``), the staging folder is
   swapped with the output folder in one ``renameat2(RENAME_EXCHANGE)`` (Linux); where that
   is unavailable the old folder is renamed aside and the new one renamed into place (a
   reader may then briefly find no folder, never a mix); the previous set is deleted;
3. a staging folder left by a killed analysis is removed by the next one (its pid is gone).

An output folder holding files this tool does not write (``--output .``) is never swapped
away: the new files are then moved in one by one, with a warning.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

from eval_harness._util.atomic_files import file_lock
from eval_harness._util.procs import pid_alive

#: names an analysis writes into its output folder (anything else there is the user's)
OWN_FILES = frozenset({
    "anova.json", "comparisons.json", "comparisons.cases.jsonl", "leaderboard.json",
    "thresholds.json", "report.md", "report.json", "report.html", "report.cases.jsonl",
    "timings.json"})
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False when not supported here."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    # non-zero: EINVAL (a filesystem without it), ENOSYS: the caller falls back
    return bool(fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)


class OutputSet:
    """A staging folder for one analysis' files; :meth:`commit` puts them in place."""

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        parent = self.target.parent
        parent.mkdir(parents=True, exist_ok=True)
        self._prefix = f".{self.target.name}."
        self._sweep(parent)
        self.path = parent / f"{self._prefix}{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        self.path.mkdir()
        self.committed = False

    def _sweep(self, parent: Path) -> None:
        """Remove staging folders of analyses that died (their pid is gone)."""
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                name = entry.name
                if not (name.startswith(self._prefix) and name.endswith(".tmp")):
                    continue
                pid = name[len(self._prefix):].split(".", 1)[0]
                if pid.isdigit() and not pid_alive(int(pid)) and entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)

    def commit(self) -> None:
        """Replace the output folder by the staged set (see the module doc)."""
        target = self.target
        with file_lock(target.parent / f".{target.name}.lock"):
            if not os.path.lexists(target):
                os.rename(self.path, target)
            elif target.is_dir() and not target.is_symlink() and self._only_ours(target):
                if _exchange(self.path, target):
                    shutil.rmtree(self.path, ignore_errors=True)  # the previous set
                else:
                    aside = self.path.with_name(self.path.name[:-4] + ".old.tmp")
                    os.rename(target, aside)
                    os.rename(self.path, target)
                    shutil.rmtree(aside, ignore_errors=True)
            else:
                print(f"warning: {target} holds files this tool does not write; the analysis "
                      "files are replaced one by one (a reader may see two analyses mixed "
                      "meanwhile); use a folder of its own for --output", file=sys.stderr)
                target.mkdir(parents=True, exist_ok=True)
                for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
                    os.replace(entry.path, target / entry.name)
                shutil.rmtree(self.path, ignore_errors=True)
        self.committed = True

    def _only_ours(self, folder: Path) -> bool:
        try:
            with os.scandir(folder) as it:
                return all(e.name in OWN_FILES or (e.name.startswith(".") and
                                                  e.name.endswith(".tmp")) for e in it)
        except OSError:
            return False

    def discard(self) -> None:
        """Remove the staging folder unless committed (an error or an interrupt)."""
        if not self.committed:
            shutil.rmtree(self.path, ignore_errors=True)


@contextlib.contextmanager
def staged_outputs() -> Iterator[list[OutputSet]]:
    """Holds the analysis' OutputSet (appended once the output folder is known); on leaving
    — by an error, Ctrl-C or SIGTERM too — an uncommitted staging folder is removed."""
    holder: list[OutputSet] = []
    try:
        yield holder
    finally:
        for outset in holder:
            outset.discard()
