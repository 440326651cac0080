"""Find run directories under one or more roots, in every registered run format.

A directory is a run when a registered run format recognises it
(:func:`eval_harness.analysis.loading.formats.classify`): this tool's when it holds
`run.json`, or `condition.json` beside a `cases/` folder (run.json lost). The
walk never descends into a run (its `cases/` may hold thousands of folders) nor into
hidden directories. The same directory reached through two roots is visited once.

Confinement (docs/security.md): a symlinked directory is followed only when it resolves
inside the root being walked (a link out of the tree is skipped and noted, never read);
a directory reached twice (a symlink loop) is walked once; an unreadable entry is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from eval_harness.analysis.loading.formats import classify
from eval_harness.errors import UsageError
from eval_harness.store.confine import inside


@dataclass(frozen=True)
class RunDir:
    """One run directory and its layout (the name of its run format)."""

    path: str
    layout: str


def _walk(root: str, out: list[RunDir], seen: set[str], base: str, visited: set[str],
          skipped: list[str], folders: dict[str, int]) -> None:
    here = os.path.realpath(root)
    if here in visited:  # reached again through a symlink (a loop): walked once
        return
    visited.add(here)
    try:
        mtime = os.stat(root).st_mtime_ns  # before the scan: a later change shows
        with os.scandir(root) as it:
            entries = list(it)
    except OSError:  # not a directory, permission, symlink loop (ELOOP), vanished
        return
    names = {e.name for e in entries}
    layout = classify(names)
    if layout is not None:
        real = os.path.realpath(root)
        if real not in seen:
            seen.add(real)
            out.append(RunDir(root, layout))
        return
    folders[root] = mtime
    for e in sorted(entries, key=lambda e: e.name):
        if e.name.startswith(".") or e.name == "cases":
            continue
        try:
            if e.is_symlink() and not inside(base, e.path):
                skipped.append(f"{e.path}: a symlink leading outside {base}; not followed "
                               "(pass its target as another root to include it)")
                continue
            is_dir = e.is_dir()
        except OSError:
            continue
        if is_dir:
            _walk(e.path, out, seen, base, visited, skipped, folders)


def find_run_dirs(roots: Iterable[str | os.PathLike[str]],
                  skipped: list[str] | None = None,
                  folders: dict[str, int] | None = None) -> list[RunDir]:
    """Every run directory under `roots`, in sorted path order per root; symlinks leading
    out of a root are noted in ``skipped`` (when given) and not followed. ``folders``
    (when given) receives every directory the walk scanned that is not a run, with its
    mtime_ns before the scan: a new run (or eval) appears in one of them, changing it."""
    out: list[RunDir] = []
    seen: set[str] = set()
    notes: list[str] = [] if skipped is None else skipped
    for root in roots:
        path = os.fspath(root)
        if not os.path.isdir(path):
            raise UsageError(f"no such directory: {path}", hint="pass a runs directory")
        _walk(path, out, seen, os.path.realpath(path), set(), notes,
              {} if folders is None else folders)
    return out
