"""Judge calibration against human labels.

Labels file (JSON Lines), one judged answer per line::

    {"judge": "correct", "rubric": "v2", "human": true, "judge_verdict": false, "case_id": "q7"}

``judge`` (str) and the booleans ``human`` / ``judge_verdict`` are required; ``rubric``
(str, default "") and ``case_id`` are optional. Groups are (judge, rubric).

Per group, with "pass" as the positive class and rows = human, columns = judge::

                   judge pass   judge fail
    human pass        tp           fn        (fn: false fail)
    human fail        fp           tn        (fp: false pass)

- agreement pₒ = (tp + tn) / n, with a Wilson 95% interval;
- Cohen's kappa κ = (pₒ − pₑ) / (1 − pₑ), pₑ = [(tp+fn)(tp+fp) + (fp+tn)(fn+tn)] / n²
  (Cohen 1960), with a seeded percentile bootstrap interval (cells resampled
  multinomially; resamples with pₑ = 1 are dropped);
- false-pass rate fp / (fp + tn): bad answers the judge lets through;
- false-fail rate fn / (tp + fn): good answers the judge rejects.

Reference values: (20, 5, 10, 15) -> κ = 0.40; (18, 2, 2, 18) -> κ = 0.80, pₒ = 0.90.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from eval_harness.config.jsonl import read_jsonl
from eval_harness.errors import ConfigError

MIN_LABELS = 30
Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (Wilson 1927)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def kappa(tp: float, fn: float, fp: float, tn: float) -> float:
    """Cohen's kappa of a 2x2 table (NaN when chance agreement is 1)."""
    n = tp + fn + fp + tn
    if n == 0:
        return math.nan
    po = (tp + tn) / n
    pe = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / (n * n)
    return math.nan if pe >= 1 else (po - pe) / (1 - pe)


def kappa_bootstrap(cells: tuple[int, int, int, int], *, seed: int = 0,
                    reps: int = 2000) -> tuple[float, float]:
    """Percentile 95% bootstrap interval of kappa."""
    n = sum(cells)
    if n == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.asarray(cells, float) / n, size=reps).astype(float)
    tp, fn, fp, tn = draws.T
    po = (tp + tn) / n
    pe = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    k = k[np.isfinite(k)]
    if k.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(k, [2.5, 97.5])
    return (float(lo), float(hi))


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def group_stats(cells: tuple[int, int, int, int], *, seed: int = 0,
                reps: int = 2000) -> dict[str, Any]:
    """Every statistic of one (judge, rubric) group."""
    tp, fn, fp, tn = cells
    n = tp + fn + fp + tn
    k = kappa(*cells)
    return {
        "n": n, "confusion": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
        "agreement": (tp + tn) / n if n else None, "agreement_ci": list(wilson(tp + tn, n)),
        "kappa": None if math.isnan(k) else k,
        "kappa_ci": list(kappa_bootstrap(cells, seed=seed, reps=reps)),
        "false_pass_rate": _rate(fp, fp + tn), "false_fail_rate": _rate(fn, tp + fn),
    }


def read_labels(path: Path) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(judge, rubric) -> (tp, fn, fp, tn); a malformed line is a ConfigError with its line."""
    if not path.exists():
        raise ConfigError("labels file not found", file=str(path), path="--labels")
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for n, row in read_jsonl(path):
        if not isinstance(row, dict) or not isinstance(row.get("judge"), str):
            raise ConfigError("each line needs a string `judge`", file=str(path), line=n)
        human, verdict = row.get("human"), row.get("judge_verdict")
        if not isinstance(human, bool) or not isinstance(verdict, bool):
            raise ConfigError("`human` and `judge_verdict` must be true or false", file=str(path),
                              line=n, hint='{"judge": "j", "human": true, "judge_verdict": false}')
        rubric = row.get("rubric") or ""
        cell = (0 if verdict else 1) if human else (2 if verdict else 3)
        counts[(row["judge"], str(rubric))][cell] += 1
    if not counts:
        raise ConfigError("labels file has no labels", file=str(path))
    return {k: (v[0], v[1], v[2], v[3]) for k, v in counts.items()}


def calibrate(path: Path, *, seed: int = 0, reps: int = 2000,
              min_kappa: float | None = None) -> dict[str, Any]:
    """The calibration report of a self-contained labels file (``human`` and
    ``judge_verdict`` on each line); ``passed`` is False when a --min-kappa gate fails."""
    return calibration_report(read_labels(path), source=str(path), seed=seed, reps=reps,
                              min_kappa=min_kappa)


def calibration_report(counts: dict[tuple[str, str], tuple[int, int, int, int]], *,
                       source: str, seed: int = 0, reps: int = 2000,
                       min_kappa: float | None = None) -> dict[str, Any]:
    """The report over (judge, rubric) -> (tp, fn, fp, tn) counts, with the gate."""
    groups = []
    for (judge, rubric), cells in sorted(counts.items()):
        stats = group_stats(cells, seed=seed, reps=reps)
        problems = []
        if min_kappa is not None:
            if stats["n"] < MIN_LABELS:
                problems.append(f"only {stats['n']} labels (need >= {MIN_LABELS})")
            if stats["kappa"] is None or stats["kappa"] < min_kappa:
                problems.append(f"kappa {stats['kappa']} < {min_kappa}")
        groups.append({"judge": judge, "rubric": rubric, **stats, "problems": problems})
    return {"schema_version": 1, "labels": source, "seed": seed, "bootstrap_reps": reps,
            "min_kappa": min_kappa, "min_labels": MIN_LABELS, "groups": groups,
            "passed": all(not g["problems"] for g in groups)}
