"""Synthetic run sets for the scale benchmarks (bench_vs_aeh.py, bench_scaling.py).

``write_runs(root, layout, conditions, cases, reps, judges=2, tags=False)`` writes
``conditions`` (a 2^k or 4 × … grid of factors) × ``cases`` × ``reps`` samples with a
boolean gate judge ``tests_pass`` and numeric 1–5 judges (``quality``, ``q2``, …), in

- ``aeh``: agent-eval-harness's layout (one directory per condition × replication with
  ``condition.json``, ``summary.yaml`` per_case, ``run_result.json``), which both tools read;
- ``native``: this tool's layout (``run.json`` + ``cases/<id>/record.json`` with a
  composite), which only this tool reads.

``config_text`` returns a matching ``eval.yaml``: for ``aeh`` one that makes both tools
compute the same composite (agent-eval-harness's rule), so their condition means agree.
Values are seeded (numpy default_rng); the data has a model effect and case variance.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from typing import Any

import numpy as np
import yaml

try:
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper


def factors_for(conditions: int) -> dict[str, list[str]]:
    """Factors giving ``conditions`` cells: 2-level factors, the first widened if needed."""
    k = max(1, int(np.log2(conditions)))
    first = conditions // 2 ** (k - 1)
    names = ["model", "effort", "context", "tools", "prompt", "temp"][:k]
    out = {names[0]: [f"m{i}" for i in range(first)]}
    for n in names[1:]:
        out[n] = ["lo", "hi"]
    assert np.prod([len(v) for v in out.values()]) == conditions, conditions
    return out


def judge_names(judges: int) -> list[str]:
    return ["tests_pass", "quality", *[f"q{i}" for i in range(2, judges)]][:judges]


def config_text(conditions: int, judges: int = 2, reps: int = 1, layout: str = "aeh") -> str:
    """The ``eval.yaml`` for a run set of ``layout``.

    ``aeh``: in agent-eval-harness's own vocabulary (no ``gate``/``weight``/``composite``
    keys), so this tool scores those runs with that tool's rule (boolean judges gate,
    numeric judges averaged over their ``score_range``) and both tools analyse the same
    composite; a ``gate: true`` here would switch this tool to its own composite (booleans
    averaged in as 0/1), see docs/migrating-from-agent-eval-harness.md. ``native``: the
    gate the records' composite was written with.
    """
    f = factors_for(conditions)
    lines = ["name: bench", "matrix:", "  factors:"]
    lines += [f"    {k}: [{', '.join(v)}]" for k, v in f.items()]
    lines += [f"  replications: {reps}", "judges:",
              "  - name: tests_pass", "    check: 'return True, \"\"'"]
    if layout == "native":
        lines += ["    gate: true"]
    for j in judge_names(judges)[1:]:
        lines += [f"  - name: {j}", "    check: 'return 3, \"\"'", "    score_range: [1, 5]"]
    return "\n".join(lines) + "\n"


def _cid(levels: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def write_runs(root: str, layout: str, conditions: int, cases: int, reps: int,
               judges: int = 2, tags: bool = False, seed: int = 1, missing: float = 0.0) -> int:
    """Write the run set under ``root/bench``; returns the number of samples.

    ``missing``: the fraction of (condition, case) cells with no sample in any
    replication (as when a case errors under a condition), drawn at random (seeded): the
    cases then miss cells, which sends ``method: auto`` to the mixed model."""
    rng = np.random.default_rng(seed)
    factors = factors_for(conditions)
    names = list(factors)
    jnames = judge_names(judges)
    case_ids = [f"case-{i:06d}" for i in range(cases)]
    case_eff = rng.normal(0, 0.8, cases)
    tiers = np.array(["easy", "medium", "hard"])[np.arange(cases) % 3]
    n = 0
    gaps = np.random.default_rng([seed, 1]).random((conditions, cases)) < missing
    for ci, combo in enumerate(itertools.product(*factors.values())):
        levels = dict(zip(names, combo, strict=True))
        shift = 0.3 * (combo[0] != factors[names[0]][0]) + 0.05 * (ci % 4)
        for rep in range(1, reps + 1):
            latent = case_eff + shift + rng.normal(0, 0.7, cases)
            ok = latent > -0.5
            qual = [np.clip(np.rint(3 + latent + rng.normal(0, 0.5, cases)), 1, 5).astype(int)
                    for _ in jnames[1:]]
            run_id = f"run-{ci:03d}-r{rep}"
            rdir = os.path.join(root, "bench", run_id)
            os.makedirs(rdir)
            keep = ~gaps[ci]
            ids = [c for c, k in zip(case_ids, keep, strict=True) if k]
            sub = [q[keep] for q in qual]
            if layout == "aeh":
                _write_aeh(rdir, run_id, levels, ci, ids, jnames, ok[keep], sub)
            else:
                _write_native(rdir, run_id, levels, rep, ids, jnames, ok[keep], sub,
                              tiers[keep] if tags else None, rng)
            n += len(ids)
    return n


def _write_aeh(rdir: str, run_id: str, levels: dict[str, Any], ci: int, case_ids: list[str],
               jnames: list[str], ok: np.ndarray, qual: list[np.ndarray]) -> None:
    with open(os.path.join(rdir, "condition.json"), "w") as fh:
        json.dump({"condition_id": f"cond-{ci}", "levels": levels}, fh)
    with open(os.path.join(rdir, "run_result.json"), "w") as fh:
        json.dump({"cost_usd": 1.5, "num_turns": 3}, fh)
    per_case = {}
    for i, case in enumerate(case_ids):
        entry = {jnames[0]: {"value": bool(ok[i]), "rationale": "r", "judge_type": "boolean"}}
        for j, q in zip(jnames[1:], qual, strict=True):
            entry[j] = {"value": int(q[i]), "rationale": "r", "judge_type": "numeric"}
        per_case[case] = entry
    with open(os.path.join(rdir, "summary.yaml"), "w") as fh:
        yaml.dump({"run_id": run_id, "per_case": per_case}, fh, Dumper=_Dumper,
                  sort_keys=False)


def _write_native(rdir: str, run_id: str, levels: dict[str, Any], rep: int,
                  case_ids: list[str], jnames: list[str], ok: np.ndarray,
                  qual: list[np.ndarray], tiers: np.ndarray | None,
                  rng: np.random.Generator) -> None:
    cid = _cid(levels)
    run = {"schema_version": 1, "eval": "bench", "run_id": run_id, "condition_id": cid,
           "levels": levels, "replication": rep, "status": "complete",
           "finished_at": "2026-01-01T00:00:00Z"}
    with open(os.path.join(rdir, "run.json"), "w") as fh:
        json.dump(run, fh)
    with open(os.path.join(rdir, "condition.json"), "w") as fh:
        json.dump({"condition_id": cid, "levels": levels}, fh)
    lat = rng.uniform(0.5, 3.0, len(case_ids))
    for i, case in enumerate(case_ids):
        scores = {jnames[0]: {"value": bool(ok[i]), "kind": "boolean",
                              "normalized": float(ok[i]), "gate": True}}
        norms = []
        for j, q in zip(jnames[1:], qual, strict=True):
            norm = (int(q[i]) - 1) / 4
            norms.append(norm)
            scores[j] = {"value": int(q[i]), "kind": "numeric", "normalized": norm,
                         "score_range": [1, 5]}
        comp = 0.0 if not ok[i] else (1.0 + sum(norms)) / (1 + len(norms))
        rec = {"schema_version": 1, "case_id": case, "condition_id": cid, "replication": rep,
               "case_hash": "h", "status": "ok", "latency_s": float(lat[i]),
               "cost_usd": 0.001, "tokens": 500, "tool_calls": 2,
               "tags": {"tier": str(tiers[i]), "cluster": f"g{i % 50}"} if tiers is not None
               else {},
               "scores": scores, "composite": comp, "composite_errored": False,
               "finished_at": "2026-01-01T00:00:00Z"}
        d = os.path.join(rdir, "cases", case)
        os.makedirs(d)
        with open(os.path.join(d, "record.json"), "w") as fh:
            fh.write(json.dumps(rec))
