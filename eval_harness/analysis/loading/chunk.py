"""One run's records → column lists (samples and judge rows); picklable for worker processes.

A *sample* is one record (one case of one run); its *rows* are one per judge plus the
`composite` row. Values: numbers as recorded, booleans 0/1, pairwise and errored NaN.
The composite is the record's own, else formed from judge specs (`composite`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from eval_harness.judges.composite import JudgeSpec, JudgeValue, composite, normalise
from eval_harness.judges.values import MAX_ABS_VALUE

NAN = math.nan
#: the largest replication number read as real (the loader uses the same bound)
MAX_REPLICATION = 1_000_000


def is_replication(value: Any) -> bool:
    """A recorded replication number: a whole number from 1 to MAX_REPLICATION."""
    return type(value) is int and 1 <= value <= MAX_REPLICATION


def _num(x: Any) -> float:
    t = type(x)
    return float(x) if t is float or t is int else NAN


class Chunk:
    """Column lists of one run's samples and rows (row → sample by local index)."""

    def __init__(self, specs: Mapping[str, JudgeSpec] | None, finished_default: str) -> None:
        self.specs = specs
        self.finished_default = finished_default
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
        self.r_sample: list[int] = []
        self.r_judge: list[str] = []
        self.r_value: list[float] = []
        self.r_kind: list[str] = []
        self.r_err: list[bool] = []
        self.r_norm: list[float] = []
        self.case_tags: dict[str, dict[str, Any]] = {}
        self.composite_unknown = False
        self.composite_inferred = False
        self.bad_records: list[str] = []
        #: judge values that are ±Infinity or NaN: errored samples, with where they were
        self.bad_values: list[str] = []

    def add_checked(self, rec: Mapping[str, Any], source: Any, replication: int,
                    where: str) -> None:
        """:meth:`add`, or — for a record whose fields have the wrong shape (hand-edited,
        written by another tool) — nothing but a line in ``bad_records``. A half-added
        record is rolled back, so every column keeps one entry per sample."""
        # sizes only (copying the tag keys per record made tagged runs quadratic)
        n_samples, n_rows, n_tags = len(self.s_case), len(self.r_sample), len(self.case_tags)
        try:
            self.add(rec, source, replication)
        except (TypeError, ValueError, AttributeError, OverflowError, LookupError) as exc:
            for name, col in vars(self).items():  # every s_* / r_* column list
                if name.startswith("s_"):
                    del col[n_samples:]
                elif name.startswith("r_"):
                    del col[n_rows:]
            for key in list(self.case_tags)[n_tags:]:  # dicts keep insertion order
                del self.case_tags[key]
            self.bad_records.append(f"{where}: malformed record ({type(exc).__name__}: {exc})"[:300])

    def add(self, rec: Mapping[str, Any], source: Any, replication: int) -> None:
        """Add one case record (source: its path, or the dict itself); raises TypeError /
        ValueError on a field of the wrong shape (see :meth:`add_checked`)."""
        idx = len(self.s_case)
        case_id = rec.get("case_id")
        if not isinstance(case_id, (str, int)) or isinstance(case_id, bool) or case_id == "":
            raise ValueError(f"case_id {case_id!r}")
        case_id = str(case_id)
        rep = rec.get("replication")
        if rep is not None and not is_replication(rep):
            raise ValueError(f"replication {rep!r}")
        scores = rec.get("scores")
        if scores is not None and not (isinstance(scores, dict)
                                       and all(isinstance(v, dict) for v in scores.values())):
            raise ValueError("scores is not a mapping of judge -> score object")
        tags = rec.get("tags")
        if tags is not None and not isinstance(tags, dict):
            raise ValueError("tags is not a mapping")
        self.s_rep.append(rep if type(rep) is int else replication)
        self.s_case.append(case_id)
        status = str(rec.get("status") or "ok")
        self.s_status.append(status)
        self.s_latency.append(_num(rec.get("latency_s")))
        self.s_cost.append(_num(rec.get("cost_usd")))
        self.s_tokens.append(_num(rec.get("tokens")))
        self.s_tools.append(_num(rec.get("tool_calls")))
        # the judges' digest rides on the case hash: a changed judge is a modified case
        digest = rec.get("judges_digest")
        self.s_hash.append(str(rec.get("case_hash") or "")
                           + (f":{digest}" if isinstance(digest, str) and digest else ""))
        self.s_source.append(source)
        self.s_finished.append(str(rec.get("finished_at") or self.finished_default))
        if tags and case_id not in self.case_tags:
            self.case_tags[case_id] = dict(tags)
        self._rows(idx, rec, status != "ok")

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
                # JSON Infinity / NaN, or 1e308 (overflows every sum of squares): an
                # error, never a score
                if not math.isfinite(val) or abs(val) > MAX_ABS_VALUE:
                    self.bad_values.append(f"case {rec.get('case_id')} judge {name}: value {raw}")
                    val, err = NAN, True
            else:
                val = NAN
            norm = sc.get("normalized")
            if type(norm) in (float, int) and val == val and not -1e-9 <= norm <= 1 + 1e-9:
                self.bad_values.append(f"case {rec.get('case_id')} judge {name}: normalized {norm}")
                val, err, norm = NAN, True, NAN
            if val != val:
                norm = NAN
            elif spec is not None and spec.score_range:  # the config's range wins
                norm = normalise(val, kind, spec.score_range)
            elif type(norm) not in (float, int):
                norm = normalise(val, kind, sc.get("score_range"))
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
        if case_err:
            value, c_err = NAN, True
        elif isinstance(recorded, (int, float)) and not isinstance(recorded, bool):
            value, c_err = float(recorded), False
            if not math.isfinite(value) or abs(value) > MAX_ABS_VALUE:
                self.bad_values.append(f"case {rec.get('case_id')}: composite {recorded}")
                value, c_err = NAN, True
        elif rec.get("composite_errored"):
            value, c_err = NAN, True
        else:
            value, c_err = composite(parts) if parts else (NAN, False)
            if math.isnan(value) and not c_err:
                self.composite_unknown = True
            elif specs is None:
                self.composite_inferred = True
        r_sample.append(idx)
        r_judge.append("composite")
        r_value.append(value)
        r_kind.append("composite")
        r_err.append(c_err)
        r_norm.append(value)
