"""Cheap statistics of earlier runs of an eval (for dry-run estimates)."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
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


@dataclass(frozen=True)
class TokenMeans:
    """Mean tokens per call over earlier records."""

    n: int
    input: float | None
    output: float | None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def token_means(eval_dir: Path, limit: int = SAMPLE_LIMIT
                ) -> tuple[dict[str, TokenMeans], dict[str, TokenMeans]]:
    """(per condition_id, per judge name) mean input / output tokens of up to ``limit``
    ok records under ``eval_dir`` (the dry-run's measured token counts)."""
    runner: dict[str, tuple[list[float], list[float]]] = {}
    judges: dict[str, tuple[list[float], list[float]]] = {}
    if eval_dir.is_dir():
        for path in itertools.islice(eval_dir.glob("*/cases/*/record.json"), limit):
            try:
                rec = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(rec, dict) or rec.get("status") != "ok":
                continue
            _add(runner.setdefault(str(rec.get("condition_id")), ([], [])), rec)
            for name, score in (rec.get("scores") or {}).items():
                if isinstance(score, dict):
                    _add(judges.setdefault(str(name), ([], [])), score)

    def means(acc: dict[str, tuple[list[float], list[float]]]) -> dict[str, TokenMeans]:
        return {k: TokenMeans(len(i), _mean(i), _mean(o)) for k, (i, o) in acc.items() if i}

    return means(runner), means(judges)


def _add(acc: tuple[list[float], list[float]], rec: dict[str, object]) -> None:
    tin, tout = rec.get("input_tokens"), rec.get("output_tokens")
    if (isinstance(tin, (int, float)) and isinstance(tout, (int, float))
            and math.isfinite(tin) and math.isfinite(tout)):
        acc[0].append(float(tin))
        acc[1].append(float(tout))
