"""One agent-eval-harness run directory → its run dict and a :class:`Chunk`, fast.

The rows of a case depend only on its judge entries' values, types, flags and ranges (not
on the case id or the rationale text), and real runs repeat few such combinations (a
boolean and a 1-5 score: about ten). So each distinct combination is scored once through
the ordinary path (`scoring.case_record` → `Chunk.add_checked`, the same code as
before) and its rows are copied for every later case with the same combination: the same
columns, ~10x faster. A combination is not reused when its rows carried a note naming
the case (a non-finite value, a malformed record) or a part is unhashable.

Chunks hold plain column lists whose repeated values are shared objects, so a worker
process sends one back cheaply (`analysis.loading.tidy_frame`). The record behind a sample
(needed only to compare two copies of the same sample) is not kept: :class:`AehSample`
re-reads it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from eval_harness.aeh.scoring import AehRule, assumed_ranges, case_record, read_summary, run_dict
from eval_harness.analysis.loading.chunk import Chunk
from eval_harness.analysis.loading.packed import Packed, pack
from eval_harness.analysis.loading.runfiles import UnreadableRun
from eval_harness.judges.composite import JudgeSpec

NAN = math.nan
#: replication placeholder: an imported record has none; the loader sets the run's
PENDING_REPLICATION = 0
#: distinct judge-entry combinations remembered per run (beyond: scored one by one)
MAX_MEMO = 10_000
#: summaries kept parsed while comparing duplicate samples
_CACHE_FILES = 4


class AehSample(NamedTuple):
    """Where an imported sample came from: its run directory and position in `per_case`."""

    run_dir: str
    position: int
    rule: AehRule

    def record(self, cache: OrderedDict[str, list[tuple[Any, Any]]]) -> dict[str, Any]:
        """The case record, re-read (``cache``: recently parsed summaries by directory)."""
        items = cache.get(self.run_dir)
        if items is None:
            items = list((read_summary(self.run_dir).get("per_case") or {}).items())
            cache[self.run_dir] = items
            while len(cache) > _CACHE_FILES:
                cache.popitem(last=False)
        else:
            cache.move_to_end(self.run_dir)
        case_id, judges = items[self.position]
        return case_record(case_id, judges, self.rule)


@dataclass(frozen=True)
class AehSources:
    """Where an imported run's samples came from: its directory, the scoring rule and each
    sample's position in `per_case` (re-read only to compare duplicate samples;
    :class:`eval_harness.analysis.loading.packed.Sources`)."""

    run_dir: str
    rule: AehRule
    positions: np.ndarray

    def at(self, i: int) -> AehSample:
        """The source of sample ``i``."""
        return AehSample(self.run_dir, int(self.positions[i]), self.rule)


def _case_key(judges: Any) -> tuple[Any, ...] | None:
    """What of a case's judge entries its rows depend on (None: not reusable).

    Per entry: the name (with its type), the value's type and value, the judge type, the
    recorded range and whether it errored — a finer key than the scoring reads, never a
    coarser one. Types are part of it (1, 1.0 and True score differently), -0.0 is kept
    apart from 0.0, and a NaN never equals itself, so it is never reused. An unhashable
    part (a list value, a mapping as range) makes the case not reusable.
    """
    if not isinstance(judges, dict):
        return ()
    key: list[Any] = []
    append = key.append
    for name, raw in judges.items():
        if isinstance(raw, dict):
            get = raw.get
            value, jtype, rng = get("value"), get("judge_type"), get("score_range")
            errored = bool(get("errored") or get("error"))
        else:
            value, jtype, rng, errored = raw, None, None, False
        vtype: type = type(value)
        if isinstance(value, float):
            value = (value, math.copysign(1.0, value))
        elif not (vtype is bool or vtype is int or vtype is str or value is None):
            return None
        if rng is not None and type(rng) is not str:
            if type(rng) is not list:
                return None
            rng = tuple(rng)
        append((type(name), name, vtype, value, type(jtype), jtype, rng, errored))
    try:
        hash(tuple(key))
    except TypeError:  # e.g. a list inside the range, an unhashable judge type
        return None
    return tuple(key)


def build_chunk(run_dir: str, per_case: Mapping[Any, Any], rule: AehRule,
                specs: Mapping[str, JudgeSpec] | None, finished_default: str) -> Chunk:
    """The chunk of one run's ``per_case`` (replication :data:`PENDING_REPLICATION`; each
    sample's source is its position in ``per_case``, see :class:`AehSample`)."""
    chunk = Chunk(specs, finished_default)
    memo: dict[tuple[Any, ...], tuple[list[Any], ...]] = {}
    s_rep, s_case, s_status, s_hash = chunk.s_rep, chunk.s_case, chunk.s_status, chunk.s_hash
    s_latency, s_cost, s_tokens, s_tools = chunk.s_latency, chunk.s_cost, chunk.s_tokens, chunk.s_tools
    s_source, s_finished = chunk.s_source, chunk.s_finished
    r_sample, r_judge, r_value = chunk.r_sample, chunk.r_judge, chunk.r_value
    r_kind, r_err, r_norm = chunk.r_kind, chunk.r_err, chunk.r_norm
    rep = PENDING_REPLICATION
    for source, (case_id, judges) in enumerate(per_case.items()):  # source: the position
        key = _case_key(judges)
        rows = memo.get(key) if key is not None else None
        cid = str(case_id)
        if rows is None or not cid:
            notes = len(chunk.bad_values) + len(chunk.bad_records)
            first = len(r_sample)
            rec = scored_record(chunk, case_id, judges, rule, run_dir)
            if rec is None:
                continue
            chunk.add_checked(rec, source, rep, run_dir)
            if key is not None and cid and len(memo) < MAX_MEMO \
                    and notes == len(chunk.bad_values) + len(chunk.bad_records):
                memo[key] = (r_judge[first:], r_value[first:], r_kind[first:], r_err[first:],
                             r_norm[first:])
            continue
        idx = len(s_case)  # the same columns Chunk.add writes for such a record
        s_rep.append(rep)
        s_case.append(cid)
        s_status.append("ok")
        s_latency.append(NAN)
        s_cost.append(NAN)
        s_tokens.append(NAN)
        s_tools.append(NAN)
        s_hash.append("")
        s_source.append(source)
        s_finished.append(finished_default)
        judge_col, value_col, kind_col, err_col, norm_col = rows
        r_sample.extend([idx] * len(judge_col))
        r_judge.extend(judge_col)
        r_value.extend(value_col)
        r_kind.extend(kind_col)
        r_err.extend(err_col)
        r_norm.extend(norm_col)
    return chunk


def scored_record(chunk: Chunk, case_id: Any, judges: Any, rule: AehRule,
                  run_dir: str) -> dict[str, Any] | None:
    """The case's record, or None and a note in ``chunk.bad_records`` when its judge
    entries cannot be scored (a score_range that is not two numbers, ...)."""
    try:
        return case_record(case_id, judges, rule)
    except (TypeError, ValueError, OverflowError, LookupError) as exc:
        chunk.bad_records.append(f"{run_dir}: case {case_id}: malformed judge entry "
                                 f"({type(exc).__name__}: {exc})"[:300])
        return None


def read_aeh_chunk(run_dir: str, rule: AehRule, specs: Mapping[str, JudgeSpec] | None
                   ) -> tuple[dict[str, Any], Packed] | UnreadableRun:
    """(run dict, chunk) of one run directory, or the UnreadableRun saying why not
    (returned, not raised, so a worker process hands it back as it is)."""
    try:
        summary = read_summary(run_dir)
        run = run_dict(run_dir, summary)
    except UnreadableRun as exc:
        return exc
    per_case = summary.get("per_case") or {}
    chunk = build_chunk(run_dir, per_case, rule, specs, str(run.get("finished_at") or ""))
    facts = run.pop("case_facts", {})
    for i, cid in enumerate(chunk.s_case):  # per-case latency / cost / tokens, when stated
        got = facts.get(cid)
        if got is not None:
            chunk.s_latency[i], chunk.s_cost[i], chunk.s_tokens[i] = got
    run["assumed_ranges"] = sorted(assumed_ranges(per_case, rule))
    return run, pack(chunk, AehSources(run_dir, rule, np.asarray(chunk.s_source, dtype=np.int64)))
