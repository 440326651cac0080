"""Pass/fail per sample and passed / failed / flaky / errored per (condition, case).

The pass rule (``VerdictRule``; one rule for reports, comparisons, leaderboard and gates,
stated in one line in each of them). ``rule`` chooses how a sample passes:

- ``requirements`` (the default; ``matrix.analysis.pass_rule: requirements``): **every
  boolean judge is a requirement** — one false fails the sample, one errored makes it
  errored (no verdict), one absent (skipped by its condition) does not count — and the
  composite must reach the pass mark. A wrong answer cannot pass by an easy second judge
  lifting the average: with a correctness check and an always-true judge, the composite of
  a wrong answer is 0.5, yet the false check fails it;
- ``composite`` (written explicitly: ``pass_rule: composite``): the weighted-average rule,
  the composite ≥ the pass mark alone (booleans count only through the composite);
- ``aeh`` (the default for agent-eval-harness configs): its rule — every boolean judge
  true (a false one makes the case 0 there) and the mean of the numeric judges, normalised
  over their score ranges, ≥ the pass mark (1 when only booleans scored; an errored judge
  is left out, as there). With a ``reward:`` block (``aeh_reward``) the composite *is* its
  reward and must reach the pass mark.

Shared by every rule:

- gate judges (``gates``: the config's ``gate: true`` judges and ``composite.gates``) must
  be true; one errored is an errored sample (no verdict), one absent does not count;
- the pass mark is ``matrix.analysis.pass_mark``, else ``thresholds.pass_score``, else 0.5.
  When the sample has no composite (not errored: e.g. a numeric judge without a score
  range) every boolean judge must be true instead, and without booleans the sample is
  *unscored*;
- with ``judges`` named (the API's per-judge rule) every one of them must reach
  ``pass_mark`` instead.

Default ``pass_mark = 0.5``: a single boolean judge then means "true", a numeric judge
means "at least the middle of its score range". A mark of 1.0 would fail any sample an
LLM judge scored 4/5, which makes every nuanced judge look flaky.

A sample is *errored* (no verdict, never a fail) when its case run errored, its composite
is flagged errored, or a named / gate / required judge errored. Per (condition, case) over
its attempts (replications): ``passed`` = every usable attempt passes, ``failed`` = none
does, ``flaky`` = some do, ``errored`` = no usable attempt and at least one errored,
``unscored`` = no usable attempt and none errored.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.distinct_rows import unique_sorted
from eval_harness.config.pass_rule import DEFAULT_PASS_RULE, PASS_RULES, VerdictRule
from eval_harness.errors import AnalysisError

__all__ = ["DEFAULT_PASS_RULE", "PASS_RULES", "VerdictRule", "case_verdicts", "sample_table",
           "verdict_tables"]

COMPOSITE = "composite"
VERDICT_RANK = {"failed": 0, "flaky": 1, "passed": 2}
_REQUIRED = ("condition_id", "run_id", "replication", "case_id", "judge", "value")
_TOL = 1e-9  # 0.1 + 0.2 style residue must not flip a pass


def _check_frame(frame: pd.DataFrame) -> None:
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise AnalysisError(f"tidy frame lacks columns {missing} (see docs/api.md, the tidy frame)")


KEYS = ["condition_id", "run_id", "replication", "case_id"]
_MAX_CODE = 2**62  # combined group codes are compressed before they could pass this


def _mask(frame: pd.DataFrame, name: str, value: str, default: bool) -> np.ndarray:
    """``frame[name] == value`` as a bool array (missing values: False; missing column:
    ``default``), without materialising a column of Python strings."""
    if name not in frame.columns:
        return np.full(len(frame), default, dtype=bool)
    return np.asarray((frame[name] == value).to_numpy(dtype=bool, na_value=False), dtype=bool)


def _floats(frame: pd.DataFrame, name: str) -> np.ndarray:
    if name not in frame.columns:
        return np.full(len(frame), np.nan)
    return np.asarray(pd.to_numeric(frame[name].reset_index(drop=True), errors="coerce"),
                      dtype=float)


def group_codes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Row → group number, groups numbered in order of first appearance (as
    ``groupby(keys, sort=False, dropna=False).ngroup()``). Each key is factorised (pyarrow's
    dictionary encoding for string columns: no Python objects) and the codes are combined
    as mixed-radix integers, compressed whenever the radix product would pass 2**62, then
    renumbered by first appearance with one sort (no row-sized hash table)."""
    combined = np.zeros(len(frame), dtype=np.int64)
    bound = 1
    for k in keys:
        codes, uniques = pd.factorize(frame[k], use_na_sentinel=False)
        radix = max(1, len(uniques))
        if bound * radix > _MAX_CODE:
            combined = _first_appearance(combined)
            bound = int(combined.max()) + 1 if len(combined) else 1
        combined = combined * radix + np.asarray(codes, dtype=np.int64)
        bound *= radix
    return _first_appearance(combined)


def _first_appearance(values: np.ndarray) -> np.ndarray:
    """Dense codes of ``values`` numbered by first appearance (``pd.factorize`` order)."""
    if not len(values):
        return values.astype(np.int64)
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def first_rows(groups: np.ndarray, n_groups: int, valid: np.ndarray | None = None) -> np.ndarray:
    """Per group, the index of its first row (where ``valid``); -1 when it has none."""
    rows = np.arange(len(groups)) if valid is None else np.flatnonzero(valid)
    first = np.full(n_groups, len(groups), dtype=np.int64)
    np.minimum.at(first, groups[rows], rows)
    first[first == len(groups)] = -1
    return first


def _take(column: pd.Series, rows: np.ndarray) -> pd.Series:
    """``column`` at ``rows`` (-1 → missing), index 0..len(rows)-1, dtype kept."""
    out = column.iloc[np.where(rows >= 0, rows, 0)].reset_index(drop=True)
    if (rows < 0).any():
        out = out.where(pd.Series(rows >= 0))
    return out


def join_unique(groups: np.ndarray, n_groups: int, items: np.ndarray | pd.Series) -> np.ndarray:
    """Per group, its distinct non-empty ``items`` sorted and comma-joined ("" when none):
    vectorised (a bit mask per group when there are at most 62 distinct items, else one
    join per group holding more than one item)."""
    series = items if isinstance(items, pd.Series) else pd.Series(items, dtype=object)
    codes, names = pd.factorize(series.astype(str), sort=True)
    codes = np.asarray(codes, dtype=np.int64)
    empty = np.flatnonzero(np.asarray(names, dtype=object) == "")
    if len(empty):
        codes = np.where(codes == empty[0], -1, codes)
    return _join_codes(groups, n_groups, codes, np.asarray(names, dtype=object))


def _join_codes(groups: np.ndarray, n_groups: int, codes: np.ndarray,
                labels: np.ndarray) -> np.ndarray:
    """``join_unique`` on item codes into sorted ``labels`` (code -1: no item)."""
    out = np.full(n_groups, "", dtype=object)
    keep = codes >= 0
    g, c = groups[keep], codes[keep]
    if not len(g):
        return out
    n_items = len(labels)
    pairs = unique_sorted(g.astype(np.int64) * n_items + c)
    gg, ii = pairs // n_items, pairs % n_items
    starts = np.flatnonzero(np.r_[True, gg[1:] != gg[:-1]])
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


def _text(column: pd.Series) -> pd.Series:
    """``column`` as str with missing values "" (a categorical column cannot be filled
    with a value that is not one of its categories)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    return column.fillna("").astype(str)


def _any(groups: np.ndarray, n_groups: int, flags: np.ndarray) -> np.ndarray:
    return np.bincount(groups[flags], minlength=n_groups) > 0


def sample_table(frame: pd.DataFrame, rule: VerdictRule | None = None) -> pd.DataFrame:
    """One row per attempt: condition_id, run_id, replication, case_id, case_hash, errored,
    composite, passed (1.0 / 0.0, NaN when errored), latency_s, cost_usd, judges (sorted
    comma-joined judge names scored on the sample, the composite excluded).

    Vectorised: rows are grouped once into attempt numbers (factorised keys) and every
    per-attempt value is a numpy reduction over them (no Python per group, no column of
    Python strings: string columns are only compared or taken at one row per attempt)."""
    _check_frame(frame)
    rule = rule or VerdictRule()
    gid = group_codes(frame, KEYS)
    n = int(gid.max()) + 1 if len(gid) else 0
    is_comp = _mask(frame, "judge", COMPOSITE, False)
    not_comp = ~is_comp
    errored = (pd.Series(frame["errored"]).fillna(False).astype(bool).to_numpy()
               if "errored" in frame.columns else np.zeros(len(frame), dtype=bool))
    norm, val = _floats(frame, "normalized"), _floats(frame, "value")
    first = first_rows(gid, n)

    def first_valid(name: str, default: Any) -> pd.Series:
        if name not in frame.columns:
            return pd.Series(np.full(n, default, dtype=object if isinstance(default, str)
                                     else float))
        return _take(frame[name], first_rows(gid, n, frame[name].notna().to_numpy()))

    case_hash = first_valid("case_hash", "")
    case_status = first_valid("case_status", "ok")
    # composite: the first non-missing composite value; errored if any composite row is
    comp_row = first_rows(gid, n, is_comp & ~np.isnan(val))
    composite = np.where(comp_row >= 0, val[np.maximum(comp_row, 0)], np.nan)
    has_comp = np.bincount(gid[is_comp], minlength=n) > 0
    comp_err = _any(gid, n, is_comp & errored)
    judges = join_unique(gid[not_comp], n, frame["judge"][not_comp])
    # Fallback when no composite row exists: mean of normalised non-pairwise judges.
    fb = not_comp & ~_mask(frame, "kind", "pairwise", False)
    fb_ok = fb & ~np.isnan(norm)
    fb_n = np.bincount(gid[fb_ok], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        fb_mean = np.bincount(gid[fb_ok], weights=norm[fb_ok], minlength=n) / fb_n
    no_comp = ~has_comp
    composite = np.where(no_comp, np.where(_any(gid, n, fb & errored), np.nan, fb_mean),
                         composite)
    status_err = (case_status == "errored").to_numpy(dtype=bool, na_value=False)
    err = status_err | comp_err
    if rule.judges:
        wanted = list(rule.judges)
        ok = np.ones(n, dtype=bool)
        judge_err = np.zeros(n, dtype=bool)
        for name in wanted:
            rows = first_rows(gid, n, _mask(frame, "judge", name, False) & ~np.isnan(norm))
            v = np.where(rows >= 0, norm[np.maximum(rows, 0)], np.nan)
            judge_err |= np.isnan(v)
            with np.errstate(invalid="ignore"):
                ok &= v >= rule.pass_mark - _TOL
        passed = (ok & ~judge_err).astype(float)
        err = err | judge_err
    else:
        score = composite
        if rule.rule == "aeh" and not rule.aeh_reward:
            score = _numeric_mean(frame, gid, n, not_comp, norm, errored, composite)
        with np.errstate(invalid="ignore"):
            passed = np.where(np.isnan(score), np.nan,
                              (score >= rule.pass_mark - _TOL).astype(float))
        # Rule 3: no composite -> every boolean judge true (when there are booleans).
        booleans = not_comp & _mask(frame, "kind", "boolean", False)
        if booleans.any():
            b_n = np.bincount(gid[booleans], minlength=n)
            b_count = np.bincount(gid[booleans & ~np.isnan(norm)], minlength=n)
            with np.errstate(invalid="ignore"):
                b_ok = np.bincount(gid[booleans & (norm >= 1.0 - _TOL)], minlength=n)
            all_true = np.where(b_count < b_n, np.nan, (b_ok == b_n).astype(float))
            passed = np.where(np.isnan(passed) & (b_n > 0), all_true, passed)
    if rule.gates:
        gate_ok, gate_err = _gates(frame, gid, n, rule.gates, norm, errored)
        passed = np.where(np.isnan(passed), passed, passed * gate_ok)
        err = err | gate_err
    if not rule.judges and rule.rule in ("requirements", "aeh") and not rule.aeh_reward:
        # every boolean judge is a requirement (aeh: an errored one is left out, as there)
        booleans = _required_booleans(frame, not_comp & _mask(frame, "kind", "boolean", False),
                                      errored)
        req_ok, req_err = _requirements(gid, n, booleans, norm, errored)
        passed = np.where(np.isnan(passed), passed, passed * req_ok)
        if rule.rule == "requirements":
            err = err | req_err
    passed = np.where(err, np.nan, passed)
    out = pd.DataFrame({k: _take(frame[k], first) for k in KEYS})
    out["case_hash"] = _text(case_hash)
    out["errored"] = err
    out["composite"] = composite
    out["passed"] = passed
    out["latency_s"] = first_valid("latency_s", np.nan).to_numpy(dtype=float, na_value=np.nan)
    out["cost_usd"] = first_valid("cost_usd", np.nan).to_numpy(dtype=float, na_value=np.nan)
    out["judges"] = judges
    return out


def _gates(frame: pd.DataFrame, gid: np.ndarray, n: int, gates: tuple[str, ...],
           norm: np.ndarray, errored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per attempt: (1.0 when no present gate judge is false else 0.0, a gate judge
    errored)."""
    ok = np.ones(n)
    err = np.zeros(n, dtype=bool)
    for name in gates:
        rows = _mask(frame, "judge", name, False)
        err |= _any(gid, n, rows & errored)
        with np.errstate(invalid="ignore"):
            false = rows & ~errored & ~np.isnan(norm) & (norm < 1.0 - _TOL)
        ok[_any(gid, n, false)] = 0.0
    return ok, err


def _required_booleans(frame: pd.DataFrame, booleans: np.ndarray,
                       errored: np.ndarray) -> np.ndarray:
    """The boolean rows that are requirements: all but those of a judge that errored on
    every sample (``--allow-errored-judges`` drops it from the composite; without the flag
    every composite holding it is errored anyway)."""
    if not booleans.any():
        return booleans
    names = pd.unique(frame["judge"].to_numpy()[booleans])
    out = booleans.copy()
    for name in names:
        rows = booleans & _mask(frame, "judge", name, False)
        if errored[rows].all():
            out &= ~rows
    return out


def _requirements(gid: np.ndarray, n: int, booleans: np.ndarray, norm: np.ndarray,
                  errored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per attempt: (1.0 when no scored boolean judge is false else 0.0, a boolean judge
    errored)."""
    ok = np.ones(n)
    with np.errstate(invalid="ignore"):
        false = booleans & ~errored & ~np.isnan(norm) & (norm < 1.0 - _TOL)
    ok[_any(gid, n, false)] = 0.0
    return ok, _any(gid, n, booleans & errored)


def _numeric_mean(frame: pd.DataFrame, gid: np.ndarray, n: int, not_comp: np.ndarray,
                  norm: np.ndarray, errored: np.ndarray, composite: np.ndarray) -> np.ndarray:
    """agent-eval-harness's score of an attempt before its boolean gates: the mean of its
    numeric judges' normalised values (errored ones left out); 1 when only booleans
    scored; the composite when neither did (nothing to say: errored or unscored)."""
    numeric = (not_comp & ~_mask(frame, "kind", "boolean", False)
               & ~_mask(frame, "kind", "pairwise", False) & ~errored & ~np.isnan(norm))
    count = np.bincount(gid[numeric], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(gid[numeric], weights=norm[numeric], minlength=n) / count
    booleans = not_comp & _mask(frame, "kind", "boolean", False) & ~errored & ~np.isnan(norm)
    only_booleans = (count == 0) & (np.bincount(gid[booleans], minlength=n) > 0)
    return np.where(count > 0, mean, np.where(only_booleans, 1.0, composite))


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
    out.insert(2, "case_hashes", join_unique(gid, n_groups, _text(samples["case_hash"])))
    use = df[usable].groupby("_g", sort=True).agg(
        n_usable=("passed", "size"),
        n_pass=("passed", "sum"),
        composite_mean=("composite", "mean"),
    )
    out = out.join(use)
    out["judges"] = _union_of_lists(gid[usable], n_groups, samples["judges"][usable])
    out["n_usable"] = out["n_usable"].fillna(0).astype(int)
    out["n_pass"] = out["n_pass"].fillna(0).round().astype(int)
    out["n_errored"] = out["n_errored"].astype(int)
    u, p, e = (out[c].to_numpy() for c in ("n_usable", "n_pass", "n_errored"))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["pass_rate"] = np.where(u > 0, p / np.where(u > 0, u, 1), math.nan)
    out["verdict"] = np.select(
        [(u == 0) & (e > 0), u == 0, p == u, p == 0],
        ["errored", "unscored", "passed", "failed"], "flaky").astype(object)
    first = first_rows(gid, n_groups)
    head = pd.DataFrame({k: _take(samples[k], first) for k in keys})
    return pd.concat([head, out.reset_index(drop=True)], axis=1)


def _union_of_lists(groups: np.ndarray, n_groups: int, joined: pd.Series) -> np.ndarray:
    """Per group, the sorted union of comma-joined name lists ("" when none); each distinct
    list is split once (a handful of distinct lists for thousands of attempts)."""
    codes, uniq = pd.factorize(_text(pd.Series(joined)))
    parts = [[j for j in str(u).split(",") if j] for u in uniq]
    width = max((len(p) for p in parts), default=0)
    if width == 0:
        return np.full(n_groups, "", dtype=object)
    names = sorted({j for p in parts for j in p})
    index = {j: i for i, j in enumerate(names)}
    table = np.full((len(parts), width), -1, dtype=np.int64)
    for i, p in enumerate(parts):
        table[i, :len(p)] = [index[j] for j in p]
    items = table[np.asarray(codes, dtype=np.int64)].ravel()
    return _join_codes(np.repeat(groups, width), n_groups, items, np.array(names, dtype=object))


def verdict_tables(
    frame: pd.DataFrame, rule: VerdictRule | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(samples, case verdicts) of ``frame``: build them once and hand them to every
    consumer (comparisons, leaderboard, reports)."""
    samples = sample_table(frame, rule or VerdictRule())
    return samples, case_verdicts(samples)
