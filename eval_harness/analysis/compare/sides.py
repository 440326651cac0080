"""One side of a comparison as columns: a condition's per-case verdict rows, built once.

``SideTable`` holds the ``case_verdicts`` columns of one condition (or of a baseline
condition) as arrays and lists, with the JSON-ready per-case side blocks' values
(Wilson interval once per distinct (passes, n)); ``build_comparisons`` makes one per
condition and every comparison the condition takes part in aligns it on its case ids.
Each column carries one trailing sentinel (absent case: n = 0, verdict "", NaN), so
``column[pos]`` with ``pos = -1`` reads "absent" without a mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.distinct_rows import unique_rows
from eval_harness.analysis.compare.fisher import fisher_exact_two_sided
from eval_harness.analysis.compare.wilson import wilson_interval


def floats_or_none(values: np.ndarray) -> list[Any]:
    """JSON-safe list of floats: NaN / inf → None. Equal values share one float object
    (pass rates, Wilson bounds and p-values take a handful of distinct values over
    thousands of cases: 24 bytes saved per repeat in the comparison rows)."""
    arr = np.asarray(values, dtype=float)
    if not arr.size:
        return []
    # grouped on the bit patterns: -0.0 and 0.0 stay distinct, as in arr.tolist()
    bits, inverse = np.unique(np.ascontiguousarray(arr).view(np.int64), return_inverse=True)
    uniq = bits.view(np.float64)
    objects: list[Any] = uniq.tolist()
    for i in np.flatnonzero(~np.isfinite(uniq)).tolist():
        objects[i] = None
    return [objects[i] for i in inverse.reshape(-1).tolist()]


def wilson_intervals(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``wilson_interval`` of each (k, n) pair, computed once per distinct pair (the
    same floats as the scalar function; NaN where n = 0)."""
    if not len(n):
        return np.empty(0), np.empty(0)
    pairs, inverse = unique_rows(k, n)
    table = np.array([wilson_interval(a, b) for a, b in pairs], dtype=float)
    return table[inverse, 0], table[inverse, 1]


def fisher_p_values(k_a: np.ndarray, n_a: np.ndarray, k_b: np.ndarray,
                    n_b: np.ndarray) -> np.ndarray:
    """``fisher_exact_two_sided`` of each case, computed once per distinct table."""
    if not len(n_a):
        return np.empty(0)
    tables, inverse = unique_rows(k_a, n_a, k_b, n_b)
    p = np.array([fisher_exact_two_sided(*t) for t in tables], dtype=float)
    return p[inverse]


def _split_hashes(joined: str) -> tuple[str, str]:
    """``"h1:j1,h2:j2"`` (sorted, comma-joined per case) -> ("h1,h2", "j1,j2"); a part
    is "" when no attempt carries it."""
    cases, judges = [], []
    for item in (x for x in joined.split(",") if x):
        case, _, digest = item.partition(":")
        cases.append(case)
        if digest:
            judges.append(digest)
    return ",".join(sorted(set(cases))), ",".join(sorted(set(judges)))


def _with_sentinel(values: Any, sentinel: Any, dtype: Any) -> np.ndarray:
    out = np.empty(len(values) + 1, dtype=dtype)
    out[:-1] = values
    out[-1] = sentinel
    return out


class SideTable:
    """Per-case verdict columns of one side (rows of ``verdicts.case_verdicts``); a
    repeated case id keeps its last row."""

    def __init__(self, cases: pd.DataFrame) -> None:
        ids = [str(c) for c in cases["case_id"].tolist()]
        self.index = {c: i for i, c in enumerate(ids)}
        m = len(ids)

        def col(name: str) -> np.ndarray:
            return cases[name].to_numpy() if m else np.empty(0, dtype=object)

        self.n = _with_sentinel(col("n_usable").astype(np.int64), 0, np.int64)
        self.k = _with_sentinel(col("n_pass").astype(np.int64), 0, np.int64)
        self.composite = _with_sentinel(col("composite_mean").astype(float), np.nan, float)
        self.verdict = _with_sentinel([str(v) for v in col("verdict").tolist()], "", object)
        self.hashes = _with_sentinel(col("case_hashes"), "", object)
        # "hash:judges" (the loader appends the judges' digest): compared part by part,
        # each only when both sides carry it (older runs have no digest)
        parts = [_split_hashes(str(h)) for h in self.hashes.tolist()]
        self.case_part = np.array([p[0] for p in parts], dtype=object)
        self.judge_part = np.array([p[1] for p in parts], dtype=object)
        self.hashed = np.array([bool(p[0]) for p in parts], dtype=bool)
        self.judges = _with_sentinel(col("judges"), "", object)
        lo, hi = wilson_intervals(self.k[:-1], self.n[:-1])
        # the values of the JSON side block, one tuple per case
        self.blocks = list(zip(
            col("n_attempts").astype(np.int64).tolist(), col("n_errored").astype(np.int64).tolist(),
            self.n[:-1].tolist(), self.k[:-1].tolist(),
            floats_or_none(col("pass_rate").astype(float)), floats_or_none(lo),
            floats_or_none(hi), self.verdict[:-1].tolist(),
            floats_or_none(self.composite[:-1]), [str(h) for h in self.hashes[:-1].tolist()],
            strict=True))

    def positions(self, ids: list[str]) -> np.ndarray:
        """Row of each case id, -1 where this side lacks it (reads the sentinel)."""
        return np.array([self.index.get(c, -1) for c in ids], dtype=np.int64)

    def block(self, pos: int) -> dict[str, Any] | None:
        """The ``reference`` / ``candidate`` block of the case at row ``pos`` (None when
        ``pos`` is -1, the side lacks the case); a new dict on every call."""
        if pos < 0:
            return None
        b = self.blocks[pos]
        return {"n_attempts": b[0], "n_errored": b[1], "n": b[2], "passes": b[3],
                "pass_rate": b[4], "wilson_ci": [b[5], b[6]], "verdict": b[7],
                "composite_mean": b[8], "case_hash": b[9]}

    def side_blocks(self, pos: np.ndarray) -> list[dict[str, Any] | None]:
        """``block`` of each position."""
        return [self.block(p) for p in pos.tolist()]


def statuses(ref: SideTable, cand: SideTable, pos_r: np.ndarray,
             pos_c: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each aligned case's status and reason, in the order of compare.py's docstring:
    new, removed, errored, unscored, modified (hash, then judges), compared."""
    has_r, has_c = pos_r >= 0, pos_c >= 0
    both = has_r & has_c
    v_r, v_c = ref.verdict[pos_r], cand.verdict[pos_c]
    j_r, j_c = ref.judges[pos_r], cand.judges[pos_c]
    err_r, err_c = v_r == "errored", v_c == "errored"
    status = np.full(len(pos_r), "compared", dtype=object)
    c_r, c_c = ref.case_part[pos_r], cand.case_part[pos_c]
    d_r, d_c = ref.judge_part[pos_r], cand.judge_part[pos_c]
    case_changed = both & ref.hashed[pos_r] & cand.hashed[pos_c] & (c_r != c_c)
    specs_changed = both & (d_r != "") & (d_c != "") & (d_r != d_c)
    status[both & (j_r != j_c)] = "modified"
    status[specs_changed | case_changed] = "modified"
    status[both & ((v_r == "unscored") | (v_c == "unscored"))] = "unscored"
    status[both & (err_r | err_c)] = "errored"
    status[~has_c] = "removed"
    status[~has_r] = "new"
    reasons = [""] * len(status)
    for i in np.flatnonzero(status != "compared").tolist():
        s = status[i]
        if s == "errored":
            sides = [name for name, e in (("reference", err_r[i]), ("candidate", err_c[i])) if e]
            reasons[i] = "no usable attempt: " + " and ".join(sides)
        elif s == "unscored":
            reasons[i] = "no pass/fail verdict (composite unavailable, no boolean judge)"
        elif s == "modified":
            if case_changed[i]:
                reasons[i] = "case_hash changed"
            elif j_r[i] != j_c[i]:
                reasons[i] = f"judges changed ({j_r[i]} -> {j_c[i]})"
            else:
                reasons[i] = "judge specs changed (type, options, range, weight or gate)"
    return status, reasons
