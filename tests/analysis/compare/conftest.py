"""Builders of small tidy frames (docs/api.md, the tidy frame) for the comparison tests."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest


def condition_id(levels: Mapping[str, Any]) -> str:
    """DESIGN.md condition id."""
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def build_frame(
    data: Mapping[tuple[Any, ...], Mapping[str, Sequence[float | None]]],
    factors: Sequence[str] = ("model",),
    *,
    eval_name: str = "demo",
    judges: Sequence[str] = ("correct",),
    case_hash: Mapping[str, str] | None = None,
    case_tags: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """``data[(level, ...)][case] = [composite per replication]`` (None = errored attempt).

    Every judge scores the composite value (so the composite equals it), latency and cost
    are deterministic functions of the values.
    """
    rows: list[dict[str, Any]] = []
    levels_order: dict[str, list[Any]] = {f: [] for f in factors}
    for combo, cases in data.items():
        levels = dict(zip(factors, combo, strict=True))
        for f, lv in levels.items():
            if lv not in levels_order[f]:
                levels_order[f].append(lv)
        cid = condition_id(levels)
        n_rep = max(len(v) for v in cases.values())
        for rep in range(1, n_rep + 1):
            run_id = f"run-{cid}-r{rep}"
            for case, values in cases.items():
                if rep > len(values):
                    continue
                v = values[rep - 1]
                err = v is None
                for judge in [*judges, "composite"]:
                    rows.append(
                        {
                            "eval": eval_name,
                            "run_id": run_id,
                            "condition_id": cid,
                            **levels,
                            "replication": rep,
                            "case_id": case,
                            "judge": judge,
                            "value": np.nan if err else float(v),
                            "kind": "composite" if judge == "composite" else "numeric",
                            "errored": err,
                            "case_status": "errored" if err else "ok",
                            "latency_s": np.nan if err else 1.0 + (v or 0.0),
                            "cost_usd": np.nan if err else 0.01 * (1 + len(str(combo))),
                            "tokens": np.nan,
                            "tool_calls": np.nan,
                            "case_hash": (case_hash or {}).get(case, "h-" + case),
                            "normalized": np.nan if err else float(v),
                        }
                    )
    frame = pd.DataFrame(rows)
    frame.attrs["factors"] = list(factors)
    frame.attrs["levels"] = levels_order
    frame.attrs["issues"] = []
    frame.attrs["case_tags"] = {k: dict(v) for k, v in (case_tags or {}).items()}
    return frame


@pytest.fixture
def make_frame() -> Callable[..., pd.DataFrame]:
    """The ``build_frame`` builder."""
    return build_frame
