"""Cheap statistics of earlier runs of an eval (for dry-run estimates), in one pass over
up to :data:`SAMPLE_LIMIT` records: mean cost and latency, and mean tokens per condition
and per judge (the price-table estimate's measured tokens)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_harness._util.numbers import run_number
from eval_harness.matrix.plan_estimate import History

SAMPLE_LIMIT = 2000


@dataclass(frozen=True)
class TokenMeans:
    """Mean tokens per call over earlier ok records."""

    n: int
    input: float | None
    output: float | None


@dataclass(frozen=True)
class Earlier:
    """What earlier records tell."""

    history: History | None
    by_condition: dict[str, TokenMeans] = field(default_factory=dict)
    by_judge: dict[str, TokenMeans] = field(default_factory=dict)



def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Tokens:
    def __init__(self) -> None:
        self.inp: list[float] = []
        self.out: list[float] = []

    def add(self, rec: dict[str, Any]) -> None:
        tin, tout = run_number(rec.get("input_tokens")), run_number(rec.get("output_tokens"))
        if tin is not None and tout is not None:
            self.inp.append(tin)
            self.out.append(tout)

    def means(self) -> TokenMeans:
        return TokenMeans(len(self.inp), _mean(self.inp), _mean(self.out))


def scan_earlier(eval_dir: Path, limit: int = SAMPLE_LIMIT) -> Earlier:
    """One pass over up to ``limit`` case records under ``eval_dir``."""
    if not eval_dir.is_dir():
        return Earlier(None)
    costs: list[float] = []
    latencies: list[float] = []
    runner: dict[str, _Tokens] = {}
    judges: dict[str, _Tokens] = {}
    n = 0
    for path in itertools.islice(eval_dir.glob("*/cases/*/record.json"), limit):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(rec, dict):
            continue
        n += 1
        cost, latency = run_number(rec.get("cost_usd")), run_number(rec.get("latency_s"))
        if cost is not None:
            costs.append(cost)
        if latency is not None:
            latencies.append(latency)
        if rec.get("status") == "ok":
            runner.setdefault(str(rec.get("condition_id")), _Tokens()).add(rec)
            for name, score in (rec.get("scores") or {}).items():
                if isinstance(score, dict):
                    judges.setdefault(str(name), _Tokens()).add(score)
    history = None if n == 0 else History(
        n_records=n, mean_cost_usd=_mean(costs), mean_latency_s=_mean(latencies))
    return Earlier(history,
                   {k: t.means() for k, t in runner.items() if t.inp},
                   {k: t.means() for k, t in judges.items() if t.inp})


def earlier_runs(eval_dir: Path, limit: int = SAMPLE_LIMIT) -> History | None:
    """Mean cost and latency over up to ``limit`` complete case records under ``eval_dir``."""
    return scan_earlier(eval_dir, limit).history
