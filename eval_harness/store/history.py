"""Cheap statistics of earlier runs of an eval (for dry-run estimates)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from eval_harness.matrix.estimate import History

SAMPLE_LIMIT = 2000


def earlier_runs(eval_dir: Path, limit: int = SAMPLE_LIMIT) -> History | None:
    """Mean cost and latency over up to ``limit`` complete case records under ``eval_dir``."""
    if not eval_dir.is_dir():
        return None
    costs: list[float] = []
    latencies: list[float] = []
    n = 0
    records = itertools.islice(eval_dir.glob("*/cases/*/record.json"), limit)
    for path in records:
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        n += 1
        cost, latency = rec.get("cost_usd"), rec.get("latency_s")
        if isinstance(cost, (int, float)) and math.isfinite(cost):
            costs.append(float(cost))
        if isinstance(latency, (int, float)) and math.isfinite(latency):
            latencies.append(float(latency))
    if n == 0:
        return None
    return History(
        n_records=n,
        mean_cost_usd=sum(costs) / len(costs) if costs else None,
        mean_latency_s=sum(latencies) / len(latencies) if latencies else None,
    )
