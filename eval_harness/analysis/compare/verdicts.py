"""Pass/fail per sample and passed / failed / flaky / errored per (condition, case).

Sample rule (``VerdictRule``), first that applies:

1. with ``judges`` named (the gate/threshold judges), a sample passes when every one of them
   has a normalised value ≥ ``pass_mark`` (booleans are 0/1, so "true");
2. when the sample has a composite, it passes when the composite ≥ ``pass_mark``;
3. when the composite is unavailable (not errored: e.g. a numeric judge without a score
   range), it passes when every boolean judge is true — booleans are the natural gates;
4. otherwise the sample is *unscored* (no verdict; never a fail, never an error).

Default ``pass_mark = 0.5``: a single boolean judge then means "true", a numeric judge
means "at least the middle of its score range", and a failed gate (which zeroes the
composite, see store.records.JudgeScore.gate) always fails. A mark of 1.0 would fail any
sample an LLM judge scored 4/5, which makes every nuanced judge look flaky.

A sample is *errored* (no verdict, never a fail) when its case run errored, its composite
is flagged errored, or (rule 1) a named judge errored or is missing. Per (condition, case)
over its attempts (replications): ``passed`` = every usable attempt passes, ``failed`` =
none does, ``flaky`` = some do, ``errored`` = no usable attempt and at least one errored,
``unscored`` = no usable attempt and none errored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.errors import AnalysisError, UsageError

COMPOSITE = "composite"
VERDICT_RANK = {"failed": 0, "flaky": 1, "passed": 2}
_REQUIRED = ("condition_id", "run_id", "replication", "case_id", "judge", "value")
_TOL = 1e-9  # 0.1 + 0.2 style residue must not flip a pass


@dataclass(frozen=True)
class VerdictRule:
    """How one sample is judged pass/fail."""

    pass_mark: float = 0.5  # threshold on the composite (or on each named judge), inclusive
    judges: tuple[str, ...] = ()  # gate judges; empty = use the composite

    def __post_init__(self) -> None:
        if not (isinstance(self.pass_mark, (int, float)) and 0.0 <= self.pass_mark <= 1.0):
            raise UsageError(f"pass_mark must be a number in [0, 1], got {self.pass_mark!r}")

    def describe(self) -> dict[str, object]:
        """JSON description written next to the results."""
        basis = "judges" if self.judges else "composite (else all boolean judges true)"
        return {"basis": basis, "pass_mark": float(self.pass_mark), "judges": list(self.judges)}


def _check_frame(frame: pd.DataFrame) -> None:
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise AnalysisError(f"tidy frame lacks columns {missing} (see docs/api.md, the tidy frame)")


KEYS = ["condition_id", "run_id", "replication", "case_id"]


def _column(frame: pd.DataFrame, name: str, default: Any) -> np.ndarray:
    if name in frame.columns:
        return frame[name].to_numpy()
    return np.full(len(frame), default, dtype=object if isinstance(default, str) else None)


def group_codes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Row → group number, groups numbered in order of first appearance (as
    ``groupby(keys, sort=False)``); the grouping runs on a plain frame (no ``attrs``)."""
    plain = pd.DataFrame({k: frame[k].to_numpy() for k in keys})
    return np.asarray(plain.groupby(keys, sort=False, dropna=False).ngroup(), dtype=np.int64)


def join_unique(groups: np.ndarray, n_groups: int, items: np.ndarray) -> np.ndarray:
    """Per group, its distinct non-empty ``items`` sorted and comma-joined ("" when none):
    vectorised (a bit mask per group when there are at most 62 distinct items, else one
    join per group holding more than one item)."""
    out = np.full(n_groups, "", dtype=object)
    codes, names = pd.factorize(pd.Series(items, dtype=object).astype(str), sort=True)
    keep = codes >= 0
    empty = np.flatnonzero(np.asarray(names, dtype=object) == "")
    if len(empty):
        keep &= codes != empty[0]
    g, c = groups[keep], codes[keep]
    if not len(g):
        return out
    n_items = len(names)
    pairs = np.unique(g.astype(np.int64) * n_items + c)
    gg, ii = pairs // n_items, pairs % n_items
    starts = np.flatnonzero(np.r_[True, gg[1:] != gg[:-1]])
    labels = np.asarray(names, dtype=object)
    if n_items <= 62:
        masks = np.bitwise_or.reduceat(np.left_shift(np.int64(1), ii), starts)
        uniq, inv = np.unique(masks, return_inverse=True)
        text = np.array([",".join(labels[[b for b in range(n_items) if (int(m) >> b) & 1]])
                         for m in uniq], dtype=object)
        out[gg[starts]] = text[inv.ravel()]
        return out
    counts = np.diff(np.r_[starts, len(gg)])
    single = counts == 1
    out[gg[starts[single]]] = labels[ii[starts[single]]]
    for s, k in zip(starts[~single], counts[~single], strict=True):
        out[gg[s]] = ",".join(labels[ii[s:s + k]])
    return out


def sample_table(frame: pd.DataFrame, rule: VerdictRule | None = None) -> pd.DataFrame:
    """One row per attempt: condition_id, run_id, replication, case_id, case_hash, errored,
    composite, passed (1.0 / 0.0, NaN when errored), latency_s, cost_usd, judges (sorted
    comma-joined judge names scored on the sample, the composite excluded).

    Vectorised: rows are grouped once into attempt numbers and every per-attempt value is
    a cython aggregation or numpy operation over them (no Python per group)."""
    _check_frame(frame)
    rule = rule or VerdictRule()
    gid = group_codes(frame, KEYS)
    n_groups = int(gid.max()) + 1 if len(gid) else 0
    judge = frame["judge"].to_numpy()
    is_comp = judge == COMPOSITE
    kind = _column(frame, "kind", "")
    errored = pd.Series(_column(frame, "errored", False)).fillna(False).astype(bool).to_numpy()
    df = pd.DataFrame({
        "_g": gid,
        "case_hash": _column(frame, "case_hash", ""),
        "case_status": _column(frame, "case_status", "ok"),
        "latency_s": _column(frame, "latency_s", np.nan),
        "cost_usd": _column(frame, "cost_usd", np.nan),
        "errored": errored,
        "_norm": pd.to_numeric(pd.Series(_column(frame, "normalized", np.nan)), errors="coerce"),
        "_val": pd.to_numeric(frame["value"].reset_index(drop=True), errors="coerce"),
    })
    index = pd.RangeIndex(n_groups, name="_g")
    out = df.groupby("_g", sort=True).agg(
        case_hash=("case_hash", "first"),
        case_status=("case_status", "first"),
        latency_s=("latency_s", "first"),
        cost_usd=("cost_usd", "first"),
    ).reindex(index)
    comp = df[is_comp].groupby("_g", sort=True).agg(
        composite=("_val", "first"), _comp_err=("errored", "any"))
    not_comp = ~is_comp
    judges = join_unique(gid[not_comp], n_groups, judge[not_comp])
    # Fallback when no composite row exists: mean of normalised non-pairwise judges.
    fallback = df[not_comp & (kind != "pairwise")].groupby("_g", sort=True).agg(
        _mean=("_norm", "mean"), _err=("errored", "any"))
    out = out.join(comp).join(fallback)
    no_comp = out["composite"].isna() & out["_comp_err"].isna()
    out.loc[no_comp, "composite"] = out.loc[no_comp, "_mean"].where(
        ~out.loc[no_comp, "_err"].astype("boolean").fillna(False).astype(bool)
    )
    comp_err = out["_comp_err"].astype("boolean").fillna(False).astype(bool)
    out["errored"] = (out["case_status"].astype(str) == "errored") | comp_err
    if rule.judges:
        wanted = df[np.isin(judge, list(rule.judges))].assign(judge=judge[np.isin(judge, list(rule.judges))])
        per = wanted.pivot_table(
            index="_g", columns="judge", values="_norm", aggfunc="first", dropna=False
        ).reindex(columns=list(rule.judges))
        ok = (per >= rule.pass_mark - _TOL).all(axis=1) & per.notna().all(axis=1)
        judge_err = per.isna().any(axis=1)
        passed = ok.reindex(out.index).astype("boolean").fillna(False).astype(float)
        out["errored"] = out["errored"] | judge_err.reindex(out.index).astype("boolean").fillna(
            True).astype(bool)
    else:
        passed = (out["composite"] >= rule.pass_mark - _TOL).astype(float)
        passed = passed.where(out["composite"].notna(), np.nan)
        # Rule 3: no composite -> every boolean judge true (when there are booleans).
        booleans = not_comp & (kind == "boolean")
        if booleans.any():
            b = df[booleans].assign(_ok=df["_norm"][booleans] >= 1.0 - _TOL)
            agg = b.groupby("_g", sort=True).agg(
                _n=("_norm", "size"), _count=("_norm", "count"), _ok=("_ok", "sum"))
            all_true = np.where(agg["_count"] < agg["_n"], np.nan,
                                (agg["_ok"] == agg["_n"]).astype(float))
            passed = passed.fillna(pd.Series(all_true, index=agg.index).reindex(out.index))
    out["passed"] = passed.where(~out["errored"], np.nan)
    out["judges"] = judges
    out["case_hash"] = out["case_hash"].fillna("").astype(str)
    cols = ["case_hash", "errored", "composite", "passed", "latency_s", "cost_usd", "judges"]
    result = out[cols].reset_index(drop=True)
    first = np.unique(gid, return_index=True)[1]
    keys = pd.DataFrame({k: frame[k].to_numpy()[first] for k in KEYS})
    return pd.concat([keys, result], axis=1)


def _verdict(n_usable: int, n_pass: int, n_errored: int) -> str:
    if n_usable == 0:
        return "errored" if n_errored else "unscored"
    if n_pass == n_usable:
        return "passed"
    return "failed" if n_pass == 0 else "flaky"


def case_verdicts(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (condition_id, case_id): n_attempts, n_errored, n_usable, n_pass, pass_rate,
    composite_mean, composite_values (list), verdict, case_hashes (sorted non-empty hashes,
    comma-joined), judges (union over usable attempts), latency_s / cost_usd means."""
    keys = ["condition_id", "case_id"]
    gid = group_codes(samples, keys)
    n_groups = int(gid.max()) + 1 if len(gid) else 0
    passed = samples["passed"].to_numpy(dtype=float)
    usable = ~np.isnan(passed)
    df = pd.DataFrame({
        "_g": gid,
        "errored": samples["errored"].to_numpy(),
        "passed": passed,
        "composite": samples["composite"].to_numpy(dtype=float),
        "latency_s": samples["latency_s"].to_numpy(dtype=float),
        "cost_usd": samples["cost_usd"].to_numpy(dtype=float),
    })
    index = pd.RangeIndex(n_groups, name="_g")
    out = df.groupby("_g", sort=True).agg(
        n_attempts=("errored", "size"),
        n_errored=("errored", "sum"),
        latency_s=("latency_s", "mean"),
        cost_usd=("cost_usd", "mean"),
    ).reindex(index)
    out.insert(2, "case_hashes",
               join_unique(gid, n_groups, samples["case_hash"].fillna("").to_numpy()))
    use = df[usable].groupby("_g", sort=True).agg(
        n_usable=("passed", "size"),
        n_pass=("passed", "sum"),
        composite_mean=("composite", "mean"),
    )
    out = out.join(use)
    out["judges"] = _union_of_lists(gid[usable], n_groups, samples["judges"].to_numpy()[usable])
    out["n_usable"] = out["n_usable"].fillna(0).astype(int)
    out["n_pass"] = out["n_pass"].fillna(0).round().astype(int)
    out["n_errored"] = out["n_errored"].astype(int)
    u, p, e = (out[c].to_numpy() for c in ("n_usable", "n_pass", "n_errored"))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pass_rate"] = np.where(u > 0, p / np.where(u > 0, u, 1), math.nan)
    out["verdict"] = np.select(
        [(u == 0) & (e > 0), u == 0, p == u, p == 0],
        ["errored", "unscored", "passed", "failed"], "flaky").astype(object)
    first = np.unique(gid, return_index=True)[1]
    head = pd.DataFrame({k: samples[k].to_numpy()[first] for k in keys})
    return pd.concat([head, out.reset_index(drop=True)], axis=1)


def _union_of_lists(groups: np.ndarray, n_groups: int, joined: np.ndarray) -> np.ndarray:
    """Per group, the sorted union of comma-joined name lists ("" when none)."""
    codes, uniq = pd.factorize(pd.Series(joined, dtype=object).fillna("").astype(str))
    parts = [[j for j in str(u).split(",") if j] for u in uniq]
    width = max((len(p) for p in parts), default=0)
    if width == 0:
        return np.full(n_groups, "", dtype=object)
    table = np.full((len(parts), width), "", dtype=object)
    for i, p in enumerate(parts):
        table[i, :len(p)] = p
    items = table[codes].ravel()
    return join_unique(np.repeat(groups, width), n_groups, items)


def verdict_tables(
    frame: pd.DataFrame, rule: VerdictRule | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(samples, case verdicts) of ``frame``: build them once and hand them to every
    consumer (comparisons, leaderboard, reports)."""
    samples = sample_table(frame, rule or VerdictRule())
    return samples, case_verdicts(samples)
