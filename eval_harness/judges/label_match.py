"""Match human labels (``store.labels``) to the judge verdicts stored in run directories.

For each label that counts (the last per condition, replication, case and judge) the
stored judge value of that sample is looked up in the tidy frame (``analysis.loading.tidy_frame``):

- the judge's verdict is *pass* when a boolean judge said true, or a numeric judge's
  normalised value is >= ``pass_mark`` (0.5 by default, the verdict rule's);
- the human verdict is the judge's when the label is ``"right"``, its opposite when
  ``"wrong"``, and for a number (the true score on the judge's scale) that score
  normalised by the judge's score range >= ``pass_mark``. The range is the linear map
  value -> normalised that the judge's stored values follow (two distinct stored points
  fix it), so no config is needed.

A label whose sample or judge value is missing, errored, pairwise, or (for a number)
whose scale cannot be recovered is *unmatched*, listed with its reason and never counted.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pandas as pd

from eval_harness._util.numbers import run_number
from eval_harness.store.labels import LabelKey, LabelRow

Cells = tuple[int, int, int, int]  # tp, fn, fp, tn (calibration.py's order)


@dataclass(frozen=True)
class StoredVerdict:
    """One judge value of one sample, as analysis reads it."""

    value: Any
    kind: str
    normalized: float | None
    errored: bool


def stored_verdicts(frame: pd.DataFrame, keys: set[LabelKey]) -> dict[LabelKey, StoredVerdict]:
    """The stored judge value of every labelled (condition, replication, case, judge)."""
    if frame.empty or not keys:
        return {}
    judges = {k[3] for k in keys}
    cases = {k[2] for k in keys}
    # isin on the (categorical) columns first: no text copy of the whole frame
    sub = frame[frame["judge"].isin(judges) & frame["case_id"].isin(cases)]
    out: dict[LabelKey, StoredVerdict] = {}
    cols = zip(sub["condition_id"].astype(str), sub["replication"].astype(int),
               sub["case_id"].astype(str), sub["judge"].astype(str), sub["value"],
               sub["kind"].astype(str), sub["normalized"], sub["errored"].astype(bool),
               strict=True)
    for cid, rep, case, judge, value, kind, norm, errored in cols:
        key = (cid, int(rep), case, judge)
        if key in keys:
            n = None if norm is None or (isinstance(norm, float) and math.isnan(norm)) else float(norm)
            out[key] = StoredVerdict(value, kind, n, bool(errored))
    return out


def judge_scales(frame: pd.DataFrame, judges: set[str]) -> dict[str, tuple[float, float]]:
    """judge -> (a, b) with normalised = a * value + b, from two distinct stored values."""
    out: dict[str, tuple[float, float]] = {}
    if frame.empty:
        return out
    if not judges:
        return out
    sub = frame[frame["judge"].isin(judges)]
    sub = sub[sub["kind"].astype(str) == "numeric"]
    for judge, g in sub.groupby(sub["judge"].astype(str), observed=True):
        pts = {(float(v), float(n)) for v, n in zip(g["value"], g["normalized"], strict=True)
               if run_number(v) is not None and run_number(n) is not None}
        by_value = dict(sorted(pts))
        if len(by_value) >= 2:
            (v0, n0), (v1, n1) = min(by_value.items()), max(by_value.items())
            a = (n1 - n0) / (v1 - v0)
            out[str(judge)] = (a, n0 - a * v0)
    return out



def judge_passes(v: StoredVerdict, pass_mark: float) -> bool | None:
    """The judge's pass/fail verdict (None when it has none)."""
    if v.errored or v.kind == "pairwise" or v.value is None:
        return None
    if v.kind == "boolean" or isinstance(v.value, bool):
        return bool(v.value)
    return None if v.normalized is None else v.normalized >= pass_mark


def match_labels(
    labels: dict[LabelKey, LabelRow], frame: pd.DataFrame, *, pass_mark: float = 0.5,
) -> tuple[dict[str, Cells], list[dict[str, Any]]]:
    """judge -> (tp, fn, fp, tn) over the matched labels, and the unmatched ones."""
    stored = stored_verdicts(frame, set(labels))
    numbered = {k[3] for k, row in labels.items() if not isinstance(row.label, str)}
    scales = judge_scales(frame, numbered)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    unmatched: list[dict[str, Any]] = []
    for key, row in labels.items():
        v = stored.get(key)
        judge_ok = None if v is None else judge_passes(v, pass_mark)
        if v is None or judge_ok is None:
            why = ("no such sample and judge in the runs" if v is None
                   else "the stored judge value has no pass/fail verdict (errored, "
                        "pairwise or missing)")
            unmatched.append({**row.model_dump(), "reason": why})
            continue
        if isinstance(row.label, str):
            human = judge_ok if row.label == "right" else not judge_ok
        elif v.kind == "boolean":
            human = bool(row.label)
        elif row.judge in scales:
            a, b = scales[row.judge]
            human = a * float(row.label) + b >= pass_mark
        else:
            unmatched.append({**row.model_dump(), "reason": "the judge's score range cannot "
                              "be recovered from its stored values"})
            continue
        cell = (0 if judge_ok else 1) if human else (2 if judge_ok else 3)
        counts[row.judge][cell] += 1
    return {j: (c[0], c[1], c[2], c[3]) for j, c in counts.items()}, unmatched


def runs_calibration(frame: pd.DataFrame, labels: list[LabelRow], *, source: str,
                     pass_mark: float = 0.5, seed: int = 0, reps: int = 2000,
                     min_kappa: float | None = None) -> dict[str, Any]:
    """The calibration report (judges.calibration) of labels matched to stored verdicts,
    with ``n_labels`` and the ``unmatched`` labels and their reasons."""
    from eval_harness.judges.calibration import calibration_report
    from eval_harness.store.labels import latest_labels

    latest = latest_labels(labels)
    cells, unmatched = match_labels(latest, frame, pass_mark=pass_mark)
    report = calibration_report({(j, ""): c for j, c in cells.items()}, source=source,
                                seed=seed, reps=reps, min_kappa=min_kappa)
    report.update(n_labels=len(latest), pass_mark=pass_mark, unmatched=unmatched)
    return report
