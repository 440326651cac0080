"""Write small run directories (this tool's layout and agent-eval-harness's) for the tests.

`data[(level, ...)][case] = [sample per replication]`, a sample being {judge: value}
(None → the whole case errored; a judge value `"ERR"` → that judge errored).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

Data = Mapping[tuple[Any, ...], Mapping[str, Sequence[Mapping[str, Any] | None]]]


def condition_id(levels: Mapping[str, Any]) -> str:
    """DESIGN.md condition id."""
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _score(value: Any, rng: Sequence[float] | None) -> dict[str, Any]:
    if value == "ERR":
        return {"value": None, "kind": "numeric", "errored": True, "error": "judge failed"}
    if isinstance(value, bool):
        return {"value": value, "kind": "boolean", "normalized": float(value)}
    if isinstance(value, str):
        return {"value": value, "kind": "pairwise"}
    out: dict[str, Any] = {"value": value, "kind": "numeric"}
    if rng:
        out["score_range"] = list(rng)
        out["normalized"] = (value - rng[0]) / (rng[1] - rng[0])
    return out


def write_native(
    root: Path,
    data: Data,
    factors: Sequence[str],
    *,
    ranges: Mapping[str, Sequence[float]] | None = None,
    eval_name: str = "demo",
    with_composite: bool = True,
    gates: Sequence[str] = (),
    weights: Mapping[str, float] | None = None,
    finished_at: str = "2026-01-01T00:00:00Z",
    cost: float | None = 0.01,
) -> list[Path]:
    """This tool's layout; composite = gated mean of normalised values (as the judges do)."""
    ranges = ranges or {}
    runs = []
    for combo, cases in data.items():
        levels = dict(zip(factors, combo, strict=True))
        cid = condition_id(levels)
        n_rep = max(len(v) for v in cases.values())
        for rep in range(1, n_rep + 1):
            run_id = f"run-{cid}" + (f"-r{rep}" if n_rep > 1 else "")
            rdir = root / eval_name / run_id
            (rdir / "cases").mkdir(parents=True, exist_ok=True)
            run = {"schema_version": 1, "eval": eval_name, "run_id": run_id, "condition_id": cid,
                   "levels": levels, "replication": rep, "finished_at": finished_at}
            (rdir / "run.json").write_text(json.dumps(run))
            (rdir / "condition.json").write_text(json.dumps({"condition_id": cid, "levels": levels}))
            for case, samples in cases.items():
                if rep > len(samples):
                    continue
                sample = samples[rep - 1]
                rec: dict[str, Any] = {"schema_version": 1, "case_id": case, "condition_id": cid,
                                       "replication": rep, "status": "ok", "latency_s": 1.0,
                                       "cost_usd": cost, "tokens": 100, "finished_at": finished_at}
                if sample is None:
                    rec.update(status="errored", reason="runner failed", scores={}, composite=None)
                else:
                    scores = {j: _score(v, ranges.get(j)) for j, v in sample.items()}
                    for g in gates:
                        scores[g]["gate"] = True
                    for j, w in (weights or {}).items():
                        scores[j]["weight"] = w
                    rec["scores"] = scores
                    if with_composite:
                        rec.update(_composite(scores))
                (rdir / "cases" / case).mkdir(exist_ok=True)
                (rdir / "cases" / case / "record.json").write_text(json.dumps(rec))
            runs.append(rdir)
    return runs


def _composite(scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """As the judges stage: weighted mean of every entering judge, a false gate → 0."""
    entering = {j: s for j, s in scores.items() if s["kind"] != "pairwise"}
    if any(s.get("errored") for s in entering.values()):
        return {"composite": None, "composite_errored": True}
    if any(s.get("gate") and not s["value"] for s in entering.values()):
        return {"composite": 0.0, "composite_errored": False}
    weights = {j: s.get("weight", 1.0) for j, s in entering.items()}
    total = sum(weights.values())
    value = sum(weights[j] * s["normalized"] for j, s in entering.items()) / total
    return {"composite": value, "composite_errored": False}


def write_aeh(root: Path, data: Data, factors: Sequence[str], *, prefix: str = "2026-07-30") -> list[Path]:
    """agent-eval-harness layout: one directory per (condition, replication)."""
    runs = []
    for ci, (combo, cases) in enumerate(data.items()):
        levels = dict(zip(factors, combo, strict=True))
        n_rep = max(len(v) for v in cases.values())
        for rep in range(1, n_rep + 1):
            run_id = f"{prefix}-c{ci}-run{rep}"
            rdir = root / run_id
            rdir.mkdir(parents=True)
            (rdir / "condition.json").write_text(json.dumps({"condition_id": f"cond-{ci}", "levels": levels}))
            (rdir / "run_result.json").write_text(json.dumps({"cost_usd": 0.5, "num_turns": 3}))
            per_case = {}
            for case, samples in cases.items():
                sample = samples[rep - 1] if rep <= len(samples) else None
                if sample is None:
                    continue
                per_case[case] = {
                    j: {"value": v, "rationale": "t",
                        "judge_type": "boolean" if isinstance(v, bool) else "numeric"}
                    for j, v in sample.items()
                }
            (rdir / "summary.yaml").write_text(yaml.safe_dump({"run_id": run_id, "per_case": per_case}))
            runs.append(rdir)
    return runs
