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


def sample_table(frame: pd.DataFrame, rule: VerdictRule | None = None) -> pd.DataFrame:
    """One row per attempt: condition_id, run_id, replication, case_id, case_hash, errored,
    composite, passed (1.0 / 0.0, NaN when errored), latency_s, cost_usd, judges (sorted
    comma-joined judge names scored on the sample, the composite excluded)."""
    _check_frame(frame)
    rule = rule or VerdictRule()
    keys = ["condition_id", "run_id", "replication", "case_id"]
    df = frame.copy()
    for col, default in (("errored", False), ("case_status", "ok"), ("case_hash", "")):
        if col not in df.columns:
            df[col] = default
    if "normalized" not in df.columns:
        df["normalized"] = np.nan
    for col in ("latency_s", "cost_usd"):
        if col not in df.columns:
            df[col] = np.nan
    df["errored"] = df["errored"].fillna(False).astype(bool)
    df["_norm"] = pd.to_numeric(df["normalized"], errors="coerce")
    df["_val"] = pd.to_numeric(df["value"], errors="coerce")
    is_comp = df["judge"] == COMPOSITE
    grouped = df.groupby(keys, sort=False, dropna=False)
    base = grouped.agg(
        case_hash=("case_hash", "first"),
        case_status=("case_status", "first"),
        latency_s=("latency_s", "first"),
        cost_usd=("cost_usd", "first"),
    )
    comp = df[is_comp].groupby(keys, sort=False)
    comp_val = comp["_val"].first()
    comp_err = comp["errored"].any()
    judges_df = df[~is_comp]
    judge_names = judges_df.groupby(keys, sort=False)["judge"].agg(
        lambda s: ",".join(sorted(set(map(str, s))))
    )
    # Fallback when no composite row exists: mean of normalised non-pairwise judges.
    scorable = judges_df[judges_df.get("kind", pd.Series("", index=judges_df.index)) != "pairwise"]
    fallback = scorable.groupby(keys, sort=False).agg(
        _mean=("_norm", "mean"), _err=("errored", "any")
    )
    out = base.join(comp_val.rename("composite")).join(comp_err.rename("_comp_err"))
    out = out.join(fallback).join(judge_names.rename("judges"))
    no_comp = out["composite"].isna() & out["_comp_err"].isna()
    out.loc[no_comp, "composite"] = out.loc[no_comp, "_mean"].where(
        ~out.loc[no_comp, "_err"].fillna(False).astype(bool)
    )
    out["errored"] = (out["case_status"].astype(str) == "errored") | out["_comp_err"].fillna(
        False
    ).astype(bool)
    if rule.judges:
        wanted = df[df["judge"].isin(rule.judges)]
        per = wanted.pivot_table(
            index=keys, columns="judge", values="_norm", aggfunc="first", dropna=False
        ).reindex(columns=list(rule.judges))
        ok = (per >= rule.pass_mark - _TOL).all(axis=1) & per.notna().all(axis=1)
        judge_err = per.isna().any(axis=1)
        passed = ok.reindex(out.index).fillna(False).astype(float)
        out["errored"] = out["errored"] | judge_err.reindex(out.index).fillna(True).astype(bool)
    else:
        passed = (out["composite"] >= rule.pass_mark - _TOL).astype(float)
        passed = passed.where(out["composite"].notna(), np.nan)
        # Rule 3: no composite -> every boolean judge true (when there are booleans).
        if "kind" in judges_df.columns:
            booleans = judges_df[judges_df["kind"] == "boolean"]
            if not booleans.empty:
                b = booleans.groupby(keys, sort=False).agg(
                    _all=(
                        "_norm",
                        lambda v: float((v >= 1.0 - _TOL).all()) if v.notna().all() else np.nan,
                    )
                )["_all"]
                passed = passed.fillna(b.reindex(out.index))
    out["passed"] = passed.where(~out["errored"], np.nan)
    out["judges"] = out["judges"].fillna("")
    out["case_hash"] = out["case_hash"].fillna("").astype(str)
    cols = ["case_hash", "errored", "composite", "passed", "latency_s", "cost_usd", "judges"]
    return out[cols].reset_index()


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
    usable = samples[samples["passed"].notna()]
    keys = ["condition_id", "case_id"]
    allg = samples.groupby(keys, sort=False)
    out = allg.agg(
        n_attempts=("errored", "size"),
        n_errored=("errored", "sum"),
        case_hashes=("case_hash", lambda s: ",".join(sorted({h for h in s if h}))),
        latency_s=("latency_s", "mean"),
        cost_usd=("cost_usd", "mean"),
    )
    ug = usable.groupby(keys, sort=False)
    use = ug.agg(
        n_usable=("passed", "size"),
        n_pass=("passed", "sum"),
        composite_mean=("composite", "mean"),
        judges=("judges", lambda s: ",".join(sorted({j for v in s for j in v.split(",") if j}))),
    )
    out = out.join(use)
    out["n_usable"] = out["n_usable"].fillna(0).astype(int)
    out["n_pass"] = out["n_pass"].fillna(0).round().astype(int)
    out["n_errored"] = out["n_errored"].astype(int)
    out["judges"] = out["judges"].fillna("")
    out["pass_rate"] = [
        (p / u) if u else math.nan for p, u in zip(out["n_pass"], out["n_usable"], strict=True)
    ]
    out["verdict"] = [
        _verdict(u, p, e)
        for u, p, e in zip(out["n_usable"], out["n_pass"], out["n_errored"], strict=True)
    ]
    return out.reset_index()
