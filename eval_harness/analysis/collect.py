"""Column-wise accumulation of samples and judge rows, with duplicate/conflict handling.

Every (condition, replication, case) is one *sample*; the condition is identified by its
levels (`json.dumps(levels, sort_keys=True, default=str)`, the text the condition id
hashes), so agent-eval-harness runs with foreign ids still line up. When the same sample
arrives twice (overlapping CI artifacts, a re-run):

- identical records (ignoring `finished_at`) → a *duplicate*: counted once, reported;
- different records → a *conflict*: the one with the latest `finished_at` (the record's,
  else its run's) is kept, ties keep the first loaded; reported with which one was kept.

Reports are grouped per pair of runs so a re-uploaded run gives one line, not thousands.
Samples and rows are kept as plain lists (one DataFrame is built at the end).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from eval_harness.analysis.aeh_chunk import AehCase
from eval_harness.analysis.chunk import Chunk
from eval_harness.analysis.composite import JudgeSpec

_MAX_LISTED = 10
_SAMPLE_COLS = ("s_rep", "s_case", "s_status", "s_latency", "s_cost", "s_tokens", "s_tools",
                "s_hash", "s_source", "s_finished")
_ROW_COLS = ("r_judge", "r_value", "r_kind", "r_err", "r_norm")


def _strip(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k != "finished_at"}


def _load(source: Any, cache: OrderedDict[str, Any]) -> Mapping[str, Any]:
    """The record behind a sample: a record.json path, an imported case, or the dict."""
    if isinstance(source, str):
        with open(source, encoding="utf-8") as fh:
            return json.load(fh)  # type: ignore[no-any-return]
    if isinstance(source, AehCase):
        return source.record(cache)
    return source  # type: ignore[no-any-return]


class Collector(Chunk):
    """All runs' samples and rows, merged chunk by chunk with duplicate handling."""

    def __init__(self, specs: Mapping[str, JudgeSpec] | None) -> None:
        super().__init__(specs, "")
        self.runs: list[dict[str, Any]] = []
        self.s_run: list[int] = []
        self.alive: list[bool] = []
        self.index: dict[tuple[str, int, str], int] = {}
        self.pair_reports: dict[tuple[str, int, int], list[str]] = {}
        self.composite_unknown_runs: set[str] = set()
        self._parsed: OrderedDict[str, Any] = OrderedDict()  # summaries re-read by _load

    def add_run(self, run: dict[str, Any]) -> int:
        """Register a run (needs `levels_key`, `run_id`, `eval`, `condition_id`, `levels`)."""
        self.runs.append(run)
        return len(self.runs) - 1

    def add_chunk(self, run_idx: int, chunk: Chunk) -> None:
        """Append one run's chunk; a sample already seen is a duplicate or a conflict."""
        base = len(self.s_case)
        for name in _SAMPLE_COLS:
            getattr(self, name).extend(getattr(chunk, name))
        for name in _ROW_COLS:
            getattr(self, name).extend(getattr(chunk, name))
        self.r_sample.extend([i + base for i in chunk.r_sample])
        n = len(chunk.s_case)
        self.s_run.extend([run_idx] * n)
        self.alive.extend([True] * n)
        for case, tags in chunk.case_tags.items():
            self.case_tags.setdefault(case, tags)
        self.bad_records.extend(chunk.bad_records)
        where = self.runs[run_idx].get("path", self.runs[run_idx].get("run_id"))
        self.bad_values.extend(f"run {where}: {v}" for v in chunk.bad_values)
        if chunk.composite_unknown:
            self.composite_unknown_runs.add(str(self.runs[run_idx]["run_id"]))
        self.composite_inferred |= chunk.composite_inferred
        lkey = self.runs[run_idx]["levels_key"]
        index = self.index
        for j in range(base, base + n):
            key = (lkey, self.s_rep[j], self.s_case[j])
            old = index.get(key)
            if old is None or self._resolve(old, j):
                index[key] = j

    def _resolve(self, old: int, new: int) -> bool:
        """A second copy of a sample: True when the new one replaces the old."""
        same = (_strip(_load(self.s_source[old], self._parsed))
                == _strip(_load(self.s_source[new], self._parsed)))
        newer = self.s_finished[new] > self.s_finished[old]
        kind = "duplicate" if same else ("conflict_new" if newer else "conflict_old")
        pair = (kind, self.s_run[old], self.s_run[new])
        self.pair_reports.setdefault(pair, []).append(self.s_case[new])
        if same or not newer:
            self.alive[new] = False
            return False
        self.alive[old] = False
        return True

    # --- reports -------------------------------------------------------------------
    def issues(self) -> list[dict[str, Any]]:
        """Duplicate and conflict reports, one per pair of runs."""
        out: list[dict[str, Any]] = []
        for (kind, a, b), cases in self.pair_reports.items():
            ra, rb = self.runs[a], self.runs[b]
            where = f"{ra['path']} and {rb['path']}"
            if kind == "duplicate":
                detail = f"{len(cases)} identical record(s) in {where}: counted once"
            else:
                kept = rb["path"] if kind == "conflict_new" else ra["path"]
                detail = (
                    f"{len(cases)} conflicting record(s) (same condition, replication and case, "
                    f"different content) in {where}: kept the newest by finished_at, from "
                    f"{kept}" + ("" if kind == "conflict_new" else " (a tie keeps the first loaded)")
                )
            out.append({"kind": "duplicate" if kind == "duplicate" else "conflict",
                        "detail": detail, "count": len(cases),
                        "runs": [ra["path"], rb["path"]], "cases": cases[:_MAX_LISTED]})
        return out
