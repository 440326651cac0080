"""The resume index: what is already complete under ``<runs-dir>/<eval>/``.

A cell is identified by (condition_id, replication, case_id); it is *complete* when a
``cases/<case-id>/record.json`` exists in a run directory whose ``run.json`` names that
condition and replication. Its ``config_digest`` decides whether it is current (skip) or
stale (rerun, overwriting that record in place). Dates in run ids play no part.

If the same cell has records in two run directories (folders copied together from
separate machines), the record with the newest ``finished_at`` is the one that counts and
the others are listed in :attr:`ResumeIndex.duplicates`; a rerun overwrites the counted one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from eval_harness._util.atomic_files import read_json

CellKey = tuple[str, int, str]  # (condition_id, replication, case_id)


@dataclass(frozen=True)
class Entry:
    """One existing record."""

    status: str  # ok | errored
    config_digest: str
    finished_at: str
    run_dir: Path
    case_hash: str = ""  # the case's content hash when it ran ("" in old records)
    #: {judge: digest} the record was scored with; None when the record predates digests
    #: (then only judge names are known, from its scores, with "" digests)
    judges: dict[str, str] | None = None


def recorded_judges(rec: dict[str, object]) -> dict[str, str] | None:
    """{judge: digest} a record was scored with: its ``judge_digests``, else its score names
    with "" digests (a record written before digests), else None (not a mapping)."""
    digests, scores = rec.get("judge_digests"), rec.get("scores")
    if isinstance(digests, dict):
        return {str(k): str(v) for k, v in digests.items()}
    if isinstance(scores, dict):
        return {str(k): "" for k in scores}
    return None


def judge_changes(recorded: dict[str, str] | None, current: dict[str, str]) -> dict[str, set[str]]:
    """{edited|added|removed: judge names} between a record's judges and the config's (a
    "" recorded digest, from a record written before digests, counts as unchanged)."""
    if recorded is None:
        return {}
    out = {"edited": {n for n, d in current.items() if recorded.get(n) not in (None, "", d)},
           "added": set(current) - set(recorded), "removed": set(recorded) - set(current)}
    return {k: v for k, v in out.items() if v}


@dataclass
class ResumeIndex:
    """Existing records and run directories of one eval."""

    eval_dir: Path
    records: dict[CellKey, Entry] = field(default_factory=dict)
    run_dirs: dict[tuple[str, int], Path] = field(default_factory=dict)
    duplicates: list[tuple[CellKey, Path]] = field(default_factory=list)

    @classmethod
    def scan(cls, eval_dir: Path) -> ResumeIndex:
        """Read every ``run.json`` and ``record.json`` under ``eval_dir``."""
        index = cls(eval_dir)
        if not eval_dir.is_dir():
            return index
        for entry in sorted(os.scandir(eval_dir), key=lambda e: e.name):
            if not entry.is_dir() or entry.name.startswith("."):
                continue
            run_dir = Path(entry.path)
            run = read_json(run_dir / "run.json")
            if not isinstance(run, dict) or "condition_id" not in run:
                continue
            key = (str(run["condition_id"]), int(run.get("replication", 1)))
            index.run_dirs.setdefault(key, run_dir)
            index._scan_cases(run_dir, key)
        return index

    def _scan_cases(self, run_dir: Path, run_key: tuple[str, int]) -> None:
        cases = run_dir / "cases"
        if not cases.is_dir():
            return
        for entry in os.scandir(cases):
            rec = read_json(Path(entry.path) / "record.json")
            if not isinstance(rec, dict):
                continue
            self.add(run_key[0], run_key[1], entry.name, Entry(
                str(rec.get("status", "errored")), str(rec.get("config_digest", "")),
                str(rec.get("finished_at") or ""), run_dir, str(rec.get("case_hash") or ""),
                recorded_judges(rec)))

    def add(self, condition_id: str, replication: int, case_id: str, entry: Entry) -> None:
        """Record one complete cell (newest ``finished_at`` wins among duplicates)."""
        key = (condition_id, replication, case_id)
        old = self.records.get(key)
        if old is not None and old.run_dir != entry.run_dir:
            loser = old if old.finished_at <= entry.finished_at else entry
            self.duplicates.append((key, loser.run_dir))
            if loser is entry:
                return
        self.records[key] = entry

    def get(self, condition_id: str, replication: int, case_id: str) -> Entry | None:
        """The counted record of a cell, if any."""
        return self.records.get((condition_id, replication, case_id))
