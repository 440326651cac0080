"""Failures that leave nothing to analyse: every sample errored, or a judge errored on
every sample it saw. Detected on the tidy frame; the reasons are read back from the run
directories (the frame keeps flags, not messages) so the user sees the cause, e.g.
``can't open file 'agnet.py' ×24``, instead of a report of empty tables.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.loading.discover import find_run_dirs
from eval_harness.store.confine import open_run_file

#: distinct reasons shown per failure
TOP_REASONS = 3
_REASON_CHARS = 200


@dataclass
class Failures:
    """What is unusable in a frame."""

    n_samples: int = 0  # samples (records) in the frame
    n_errored: int = 0  # of which the run itself errored
    scored: bool = True  # at least one non-errored judge value exists
    cell_reasons: Counter[str] = field(default_factory=Counter)
    # judge -> (samples it saw, reasons); only judges that errored on every one
    dead_judges: dict[str, tuple[int, Counter[str]]] = field(default_factory=dict)

    @property
    def all_errored(self) -> bool:
        """Every sample's run errored."""
        return self.n_samples > 0 and self.n_errored == self.n_samples


def _short(text: Any) -> str:
    line = " ".join(str(text or "unknown reason").split())
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 1] + "…"


def format_reasons(reasons: Mapping[str, int], top: int = TOP_REASONS) -> str:
    """``reason ×n; reason ×m; (+k more)`` — the most common first."""
    items = Counter(reasons).most_common()
    text = "; ".join(f"{r} ×{n}" for r, n in items[:top])
    if len(items) > top:
        text += f"; (+{len(items) - top} more distinct reasons)"
    return text


def _records(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Every native record.json under ``paths`` (agent-eval-harness runs carry their
    reasons in summary.yaml and are skipped here)."""
    out: list[dict[str, Any]] = []
    for run in find_run_dirs(paths):
        if run.layout != "native":
            continue
        cases = os.path.join(run.path, "cases")
        if not os.path.isdir(cases):
            continue
        for entry in os.scandir(cases):
            try:
                # a symlink or a FIFO named record.json is refused, never waited on
                with open_run_file(os.path.join(entry.path, "record.json"), "r",
                                   encoding="utf-8") as fh:
                    rec = json.load(fh)
            except (OSError, ValueError, RecursionError):
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


def _equals(column: pd.Series, value: str) -> np.ndarray:
    """``column == value`` as a bool array, missing values False."""
    return np.asarray((column == value).to_numpy(dtype=bool, na_value=False), dtype=bool)


def find_failures(frame: pd.DataFrame, paths: Sequence[Path]) -> Failures:
    """Detect unusable results in ``frame`` (loaded from ``paths``); read the reasons."""
    out = Failures()
    if frame.empty or "judge" not in frame:
        return out
    # boolean columns only: filtering the frame would copy every column (hundreds of MB)
    is_comp = _equals(frame["judge"], "composite")
    status_err = _equals(frame["case_status"], "errored")
    errored = frame["errored"].astype(bool).to_numpy()
    has_value = frame["value"].notna().to_numpy()
    out.n_samples = int(is_comp.sum())
    out.n_errored = int((is_comp & status_err).sum())
    is_judge = ~is_comp & ~_equals(frame["kind"], "pairwise")
    out.scored = bool((is_judge & ~errored & has_value).any()
                      or (is_comp & ~errored & has_value).any())
    ran = is_judge & ~status_err
    codes, names = pd.factorize(frame["judge"])  # missing names: -1, dropped like groupby
    codes = np.asarray(codes)
    seen = np.bincount(codes[ran & (codes >= 0)], minlength=len(names))
    failed = np.bincount(codes[ran & errored & (codes >= 0)], minlength=len(names))
    n_ran = {str(names[i]): int(seen[i]) for i in np.flatnonzero(seen)}
    dead = sorted(str(names[i]) for i in np.flatnonzero((seen > 0) & (failed == seen)))
    if not out.n_errored and not dead:
        return out
    records = _records(paths)
    for rec in records:
        if rec.get("status") == "errored":
            out.cell_reasons[_short(rec.get("reason"))] += 1
    for judge in dead:
        reasons: Counter[str] = Counter()
        for rec in records:
            score = (rec.get("scores") or {}).get(judge)
            if rec.get("status") != "errored" and isinstance(score, dict) and score.get("errored"):
                reasons[_short(score.get("error"))] += 1
        n = n_ran[judge]
        out.dead_judges[judge] = (n, reasons or Counter({"reason not recorded": n}))
    if out.n_errored and not out.cell_reasons:
        out.cell_reasons["reason not recorded (see the run directories)"] = out.n_errored
    return out
