"""Every run's columns merged into one set, with duplicate/conflict handling.

Every (condition, replication, case) is one *sample*; the condition is identified by its
levels (`json.dumps(levels, sort_keys=True, default=str)`, the text the condition id
hashes), so agent-eval-harness runs with foreign ids still line up. When the same sample
arrives twice (overlapping CI artifacts, a re-run):

- identical records (ignoring `finished_at`) → a *duplicate*: counted once, reported;
- different records → a *conflict*: the one with the latest `finished_at` (the record's,
  else its run's) is kept, ties keep the first loaded; reported with which one was kept.

Reports are grouped per pair of runs so a re-uploaded run gives one line, not thousands.
Runs arrive as :class:`Packed` arrays; :meth:`Collector.finish` joins them and finds
repeated samples with one sort over integer keys (only repeats reach Python, in load
order, so the outcome is the one a sample-by-sample pass gives).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.loading.packed import Packed
from eval_harness.judges.composite import JudgeSpec
from eval_harness.store.confine import open_run_file

_MAX_LISTED = 10
_SAMPLE = ("s_rep", "s_case", "s_status", "s_latency", "s_cost", "s_tokens", "s_tools",
           "s_hash", "s_finished")
_ROWS = ("r_judge", "r_value", "r_kind", "r_err", "r_norm")


def _strip(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k != "finished_at"}


def _load(source: Any, cache: OrderedDict[str, Any]) -> Mapping[str, Any]:
    """The record behind a sample: a record.json path, the dict, or a run format's source
    (an object whose ``record(cache)`` re-reads it; ``packed.Sources``)."""
    if isinstance(source, str):
        with open_run_file(source, "r", encoding="utf-8") as fh:
            return json.load(fh)  # type: ignore[no-any-return]
    if isinstance(source, Mapping):
        return source
    return source.record(cache)  # type: ignore[no-any-return]


class Collector:
    """All runs' samples and rows; after :meth:`finish`, one array per column (same
    names as :class:`Packed`, ``r_sample`` global) plus ``s_run`` and ``alive``."""

    def __init__(self, specs: Mapping[str, JudgeSpec] | None) -> None:
        self.specs = specs
        self.runs: list[dict[str, Any]] = []
        self.parts: list[tuple[int, Packed]] = []
        self.case_tags: dict[str, dict[str, Any]] = {}
        self.bad_records: list[str] = []
        self.bad_values: list[str] = []
        self.composite_unknown_runs: set[str] = set()
        self.composite_inferred = False
        self.pair_reports: dict[tuple[str, int, int], list[str]] = {}
        self._parsed: OrderedDict[str, Any] = OrderedDict()  # summaries re-read by _load
        self._bases = np.zeros(0, dtype=np.int64)
        self._sources: list[Any] = []
        # the joined columns (filled by finish)
        none = np.zeros(0, dtype=object)
        self.s_rep = self.s_case = self.s_status = self.s_latency = self.s_cost = none
        self.s_tokens = self.s_tools = self.s_hash = self.s_finished = none
        self.r_judge = self.r_value = self.r_kind = self.r_err = self.r_norm = none
        self.r_sample = self.s_run = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)

    def add_run(self, run: dict[str, Any]) -> int:
        """Register a run (needs `levels_key`, `run_id`, `eval`, `condition_id`, `levels`)."""
        self.runs.append(run)
        return len(self.runs) - 1

    def add_chunk(self, run_idx: int, part: Packed) -> None:
        """Append one run's columns (repeated samples are found by :meth:`finish`)."""
        self.parts.append((run_idx, part))
        for case, tags in part.case_tags.items():
            self.case_tags.setdefault(case, tags)
        self.bad_records.extend(part.bad_records)
        where = self.runs[run_idx].get("path", self.runs[run_idx].get("run_id"))
        self.bad_values.extend(f"run {where}: {v}" for v in part.bad_values)
        if part.composite_unknown:
            self.composite_unknown_runs.add(str(self.runs[run_idx]["run_id"]))
        self.composite_inferred |= part.composite_inferred

    def finish(self) -> None:
        """Join the runs' columns and mark repeated samples (``alive``)."""
        parts = [p for _, p in self.parts]
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        bases = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._bases = bases[:-1]
        for name in (*_SAMPLE, *_ROWS):  # one column at a time, each part's copy dropped
            cols = [getattr(p, name) for p in parts]
            for p in parts:
                setattr(p, name, None)
            setattr(self, name, np.concatenate(cols) if cols else np.zeros(0, dtype=object))
            del cols
        self.r_sample = (np.concatenate([p.r_sample + b for p, b in zip(parts, bases, strict=False)])
                         if parts else np.zeros(0, dtype=np.int64))
        self.s_run = np.repeat(np.array([r for r, _ in self.parts], dtype=np.int64), sizes)
        self._sources = [p.source for p in parts]  # the rest of each part is joined above
        self.parts = []
        self.alive = np.ones(int(bases[-1]), dtype=bool)
        self._mark_repeats()

    def _mark_repeats(self) -> None:
        n = len(self.alive)
        if n < 2:
            return
        level_codes = pd.factorize(np.array([r["levels_key"] for r in self.runs], dtype=object))[0]
        cond_rep = pd.factorize(level_codes[self.s_run].astype(np.int64) * (int(self.s_rep.max()) + 1)
                                + self.s_rep)[0].astype(np.int64)
        case_codes, case_uniques = pd.factorize(self.s_case)
        key = cond_rep * len(case_uniques) + case_codes  # < n * n: no overflow
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        repeat = np.zeros(n, dtype=bool)
        repeat[1:] = ordered[1:] == ordered[:-1]
        if not repeat.any():
            return
        holder: dict[int, int] = {}
        for j in order[~repeat]:  # the first copy of each sample that has repeats
            holder[int(key[j])] = int(j)
        for j in np.sort(order[repeat]).tolist():  # later copies, in load order
            k = int(key[j])
            if self._resolve(holder[k], j):
                holder[k] = j

    def _source(self, j: int) -> Any:
        part = int(np.searchsorted(self._bases, j, side="right")) - 1
        return self._sources[part](j - int(self._bases[part]))

    def _resolve(self, old: int, new: int) -> bool:
        """A second copy of a sample: True when the new one replaces the old."""
        same = (_strip(_load(self._source(old), self._parsed))
                == _strip(_load(self._source(new), self._parsed)))
        newer = self.s_finished[new] > self.s_finished[old]
        kind = "duplicate" if same else ("conflict_new" if newer else "conflict_old")
        pair = (kind, int(self.s_run[old]), int(self.s_run[new]))
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
