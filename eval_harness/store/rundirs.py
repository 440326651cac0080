"""Run directories: one per (condition, replication) of an eval, reused by every later run.

Policy (no duplicates by construction): the first run of a (condition, replication)
creates ``<runs-dir>/<eval>/<date>-<label>[-r<n>]/`` (date = UTC day of creation); every
later run — resume, ``--force``, a new shard, a raised replication count — writes into the
*same* directory, overwriting stale records in place. Creation happens under an eval-wide
``flock`` (``<eval>/.lock``), so shards starting together agree on one folder.
``run.json`` updates happen under a per-run lock and merge ``shards`` from every writer.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_harness._util.atomic_files import atomic_write_json, file_lock, read_json
from eval_harness._util.clock import utc_date, utc_timestamp
from eval_harness._util.file_modes import make_dirs
from eval_harness._version import __version__
from eval_harness.matrix.builder import Condition
from eval_harness.matrix.ids import HASH_VERSION
from eval_harness.store.records import RunRecord


@dataclass(frozen=True)
class RunDir:
    """A run directory and what it holds."""

    path: Path
    condition: Condition
    replication: int
    digest: str

    @property
    def run_id(self) -> str:
        """Folder name."""
        return self.path.name

    def case_dir(self, case_id: str) -> Path:
        """``cases/<case-id>/`` (not created)."""
        return self.path / "cases" / case_id


def _new_name(eval_dir: Path, cond: Condition, rep: int, replications: int) -> Path:
    date = utc_date()
    path = eval_dir / cond.run_id(date, rep, replications)
    if path.exists():  # same label+date from another condition (slug collision)
        path = path.with_name(f"{path.name}-{cond.condition_id[:6]}")
    return path


def open_run_dirs(
    eval_dir: Path, eval_name: str, wanted: Iterable[tuple[Condition, int]],
    existing: dict[tuple[str, int], Path], digests: dict[str, str], replications: int,
    shard: str | None,
) -> dict[tuple[str, int], RunDir]:
    """Find or create the run directory of every wanted (condition, replication); mark
    each ``running`` in its run.json."""
    out: dict[tuple[str, int], RunDir] = {}
    make_dirs(eval_dir)
    with file_lock(eval_dir / ".lock"):
        for cond, rep in wanted:
            key = (cond.condition_id, rep)
            if key in out:
                continue
            path = existing.get(key) or _find_existing(eval_dir, key)
            if path is None:
                path = _new_name(eval_dir, cond, rep, replications)
                make_dirs(path / "cases")
                atomic_write_json(path / "condition.json",
                                  {"condition_id": cond.condition_id, "levels": cond.levels})
            run = RunDir(path, cond, rep, digests[cond.condition_id])
            update_run_json(run, eval_name, status="running", shard=shard, starting=True)
            out[key] = run
    return out


def _find_existing(eval_dir: Path, key: tuple[str, int]) -> Path | None:
    # Another process may have created it after our index scan.
    for child in sorted(eval_dir.iterdir()):
        run = read_json(child / "run.json") if child.is_dir() else None
        if isinstance(run, dict) and (run.get("condition_id"), run.get("replication", 1)) == key:
            return child
    return None


def update_run_json(run: RunDir, eval_name: str, *, status: str, shard: str | None,
                    starting: bool = False, aborted_reason: str | None = None) -> None:
    """Create or update ``run.json`` under the run's lock."""
    with file_lock(run.path / ".run.lock"):
        old: dict[str, Any] = read_json(run.path / "run.json") or {}
        shards = sorted(set(old.get("shards") or []) | ({shard} if shard else set()))
        now = utc_timestamp()
        record = RunRecord.model_validate({
            "eval": eval_name, "run_id": run.run_id, "condition_id": run.condition.condition_id,
            "levels": run.condition.levels, "replication": run.replication,
            "config_digest": run.digest, "tool_version": __version__,
            "started_at": old.get("started_at") or now, "finished_at": None if starting else now,
            "status": status, "shard": shard if len(shards) <= 1 else ",".join(shards),
        })
        data = record.model_dump()
        data.update(shards=shards, label=run.condition.label, hash_version=HASH_VERSION,
                    last_started_at=now if starting else old.get("last_started_at"),
                    aborted_reason=aborted_reason if status == "aborted" else None)
        atomic_write_json(run.path / "run.json", data)
    # a run's status changed: the eval folder's mtime says so, which is all the dashboard's
    # change token looks at between its full passes (serve/catalog.py)
    touch_eval_folder(run.path.parent)


def touch_eval_folder(eval_dir: Path) -> None:
    """Move the eval folder's mtime forward (at least 1 ns, even within one tick of a
    coarse file-system clock): a reader comparing it sees that something changed."""
    with contextlib.suppress(OSError):
        st = os.stat(eval_dir)
        now = time.time_ns()
        os.utime(eval_dir, ns=(st.st_atime_ns, max(now, st.st_mtime_ns + 1)))


def finish_run_dir(run: RunDir, eval_name: str, case_ids: list[str], *, aborted: bool,
                   shard: str | None, reason: str | None = None) -> str:
    """Recount this run's current records; write its final status and return it.

    ``complete``: every case has a record under the current digest; ``partial``: some do
    not (other shards may still be running, or cells errored out of this process);
    ``aborted``: this process stopped early; ``reason`` (``interrupted`` for Ctrl-C,
    ``terminated`` for SIGTERM, ``quota``, ``error``) is written as ``aborted_reason``.
    """
    done = 0
    cases = os.path.join(run.path, "cases")  # strings: a pathlib join per case is slow
    for case_id in case_ids:
        rec = read_json(os.path.join(cases, case_id, "record.json"))
        if isinstance(rec, dict) and rec.get("config_digest") == run.digest:
            done += 1
    status = "complete" if done == len(case_ids) else ("aborted" if aborted else "partial")
    update_run_json(run, eval_name, status=status, shard=shard, aborted_reason=reason)
    return status
