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
import math
from collections.abc import Mapping
from typing import Any

from eval_harness.analysis.composite import JudgeSpec, JudgeValue, composite, normalise

NAN = math.nan
_MAX_LISTED = 10


def _num(x: Any) -> float:
    t = type(x)
    return float(x) if t is float or t is int else NAN


def _strip(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k != "finished_at"}


class Collector:
    """Accumulates samples (one per record) and rows (one per judge + the composite)."""

    def __init__(self, specs: Mapping[str, JudgeSpec] | None) -> None:
        self.specs = specs
        self.runs: list[dict[str, Any]] = []
        # sample columns
        self.s_run: list[int] = []
        self.s_rep: list[int] = []
        self.s_case: list[str] = []
        self.s_status: list[str] = []
        self.s_latency: list[float] = []
        self.s_cost: list[float] = []
        self.s_tokens: list[float] = []
        self.s_tools: list[float] = []
        self.s_hash: list[str] = []
        self.s_source: list[Any] = []
        self.s_finished: list[str] = []
        self.alive: list[bool] = []
        # row columns
        self.r_sample: list[int] = []
        self.r_judge: list[str] = []
        self.r_value: list[float] = []
        self.r_kind: list[str] = []
        self.r_err: list[bool] = []
        self.r_norm: list[float] = []
        self.index: dict[tuple[str, int, str], int] = {}
        self.case_tags: dict[str, dict[str, Any]] = {}
        self.pair_reports: dict[tuple[str, int, int], list[str]] = {}
        self.composite_unknown: set[str] = set()
        self.composite_inferred = False
        self.bad_records: list[str] = []

    def add_run(self, run: dict[str, Any]) -> int:
        """Register a run (needs `levels_key`, `run_id`, `eval`, `condition_id`, `levels`)."""
        self.runs.append(run)
        return len(self.runs) - 1

    # --- samples -------------------------------------------------------------------
    def add_record(self, run_idx: int, rec: Mapping[str, Any], source: Any, replication: int) -> None:
        """Add one case record of run `run_idx` (source: its path, or the dict itself)."""
        run = self.runs[run_idx]
        case_id = str(rec.get("case_id"))
        key = (run["levels_key"], replication, case_id)
        finished = str(rec.get("finished_at") or run.get("finished_at") or "")
        old = self.index.get(key)
        if old is not None and not self._replace(old, run_idx, rec, finished):
            return
        idx = len(self.s_run)
        self.index[key] = idx
        self.s_run.append(run_idx)
        self.s_rep.append(replication)
        self.s_case.append(case_id)
        status = str(rec.get("status") or "ok")
        self.s_status.append(status)
        self.s_latency.append(_num(rec.get("latency_s")))
        cost = rec.get("cost_usd")
        self.s_cost.append(NAN if cost is None else _num(cost))
        tokens = rec.get("tokens")
        self.s_tokens.append(NAN if tokens is None else _num(tokens))
        tools = rec.get("tool_calls")
        self.s_tools.append(NAN if tools is None else _num(tools))
        self.s_hash.append(str(rec.get("case_hash") or ""))
        self.s_source.append(source)
        self.s_finished.append(finished)
        self.alive.append(True)
        tags = rec.get("tags")
        if tags and case_id not in self.case_tags:
            self.case_tags[case_id] = dict(tags)
        self._rows(idx, rec, status != "ok")

    def _load(self, source: Any) -> Mapping[str, Any]:
        if isinstance(source, str):
            with open(source, encoding="utf-8") as fh:
                return json.load(fh)  # type: ignore[no-any-return]
        return source  # type: ignore[no-any-return]

    def _replace(self, old: int, run_idx: int, rec: Mapping[str, Any], finished: str) -> bool:
        """Handle a second copy of a sample; True when the new record replaces the old."""
        same = _strip(self._load(self.s_source[old])) == _strip(rec)
        old_run = self.s_run[old]
        newer = finished > self.s_finished[old]
        kind = "duplicate" if same else ("conflict_new" if newer else "conflict_old")
        self.pair_reports.setdefault((kind, old_run, run_idx), []).append(str(rec.get("case_id")))
        if same or not newer:
            return False
        self.alive[old] = False
        return True

    # --- rows ----------------------------------------------------------------------
    def _rows(self, idx: int, rec: Mapping[str, Any], case_err: bool) -> None:
        # hot loop (one call per record): locals only, no per-judge objects unless needed
        specs = self.specs
        recorded = rec.get("composite")
        need_parts = not case_err and (recorded is None or isinstance(recorded, bool))
        parts: list[JudgeValue] = []
        scores = rec.get("scores") or {}
        r_sample, r_judge, r_value = self.r_sample, self.r_judge, self.r_value
        r_kind, r_err, r_norm = self.r_kind, self.r_err, self.r_norm
        for name, sc in scores.items():
            kind = sc.get("kind") or "numeric"
            raw = sc.get("value")
            err = case_err or bool(sc.get("errored"))
            spec = specs.get(name) if specs else None
            if spec is not None and spec.pairwise:
                kind = "pairwise"
            if err:
                val = NAN
            elif raw is True or raw is False:
                if kind != "pairwise":
                    kind = "boolean"
                val = 1.0 if raw else 0.0
            elif kind != "pairwise" and type(raw) in (float, int):
                val = float(raw)
            else:
                val = NAN
            norm = sc.get("normalized")
            if spec is not None or type(norm) not in (float, int) or val != val:
                rng = spec.score_range if spec is not None and spec.score_range else sc.get("score_range")
                norm = normalise(val, kind, rng)
            r_sample.append(idx)
            r_judge.append(name)
            r_value.append(val)
            r_kind.append(kind)
            r_err.append(err)
            r_norm.append(norm)
            if not need_parts or kind == "pairwise":
                continue
            if spec is not None:
                if spec.in_composite:
                    parts.append(JudgeValue(norm, err, spec.gate, spec.weight))
            elif specs is None:
                parts.append(JudgeValue(norm, err, bool(sc.get("gate")), float(sc.get("weight", 1.0))))
        self._composite_row(idx, rec, case_err, parts)

    def _composite_row(
        self, idx: int, rec: Mapping[str, Any], case_err: bool, parts: list[JudgeValue]
    ) -> None:
        recorded = rec.get("composite")
        if case_err:
            value, err = NAN, True
        elif isinstance(recorded, (int, float)) and not isinstance(recorded, bool):
            value, err = float(recorded), False
        elif rec.get("composite_errored"):
            value, err = NAN, True
        else:
            value, err = composite(parts) if parts else (NAN, False)
            if math.isnan(value) and not err:
                run = self.runs[self.s_run[idx]]
                self.composite_unknown.add(str(run["run_id"]))
            elif self.specs is None:
                self.composite_inferred = True
        self.r_sample.append(idx)
        self.r_judge.append("composite")
        self.r_value.append(value)
        self.r_kind.append("composite")
        self.r_err.append(err)
        self.r_norm.append(value)

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
