"""False-alarm rate and power of the CI gate (``--fail-on-regression``), by simulation.

Run (seeded; a few minutes on one core, parallel with --workers):

    nice -n 10 .venv/bin/python bench/bench_gate.py --reruns 400 --workers 2

Each simulated rerun draws a fresh baseline and a fresh set of new runs of the same agent
(or of a degraded one), builds the tidy frames, runs ``build_comparisons`` against the
baseline exactly as ``orchestrate --baseline baseline.json`` does, and applies the three
gate rules (``--gate overall`` — the default —, ``cases``, ``strict``). Printed: the
fraction of reruns whose gate failed, with a Wilson 95% interval.

The agent is the bundled example's (configs/example/agent.py): per call
P(correct) = logistic(tier + case offset + model + effort + docs(model) − degrade + ε),
ε ~ N(0, 0.6²) (N(0, 2²) for its four flaky cases), and a sample passes when it is correct.
Scenarios:

- noisy: 8 conditions × 32 cases × 2 replications, unchanged (false alarms), and with
  ``EXAMPLE_AGENT_DEGRADE=1.0`` (a logit penalty of 1 on every call: power);
- deterministic: the same agent at temperature 0 — each (condition, case) answer is fixed
  (the call noise is drawn once per simulated app and shared by baseline and rerun),
  1 replication; unchanged, and degraded by 1.0.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RULES = ("overall", "cases", "strict")


def _agent() -> Any:
    spec = importlib.util.spec_from_file_location("example_agent",
                                                  ROOT / "configs/example/agent.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _design() -> tuple[list[dict[str, str]], list[str], np.ndarray, np.ndarray]:
    """Conditions (levels), case ids, the (conditions × cases) noise-free logit, and the
    per-case call-noise sd."""
    agent = _agent()
    cases = [json.loads(line) for line in
             (ROOT / "configs/example/cases.jsonl").read_text().splitlines() if line.strip()]
    conds = [{"context": c, "effort": e, "model": m} for m in agent.MODEL for e in agent.EFFORT
             for c in ("none", "docs")]
    ids = [c["id"] for c in cases]
    base = np.array([[agent.TIER.get(c.get("tags", {}).get("tier", "medium"), 0.0)
                      + agent.case_offset(c["id"]) + agent.MODEL[lv["model"]]
                      + agent.EFFORT[lv["effort"]]
                      + (agent.DOCS[lv["model"]] if lv["context"] == "docs" else 0.0)
                      for c in cases] for lv in conds])
    sd = np.array([2.0 if i in agent.FLAKY else 0.6 for i in ids])
    return conds, ids, base, sd


def _cid(levels: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _frame(conds: list[dict[str, str]], ids: list[str], passed: np.ndarray) -> pd.DataFrame:
    """Tidy frame of ``passed[condition, case, replication]`` (one boolean judge
    ``correct`` and the composite equal to it)."""
    n_cond, n_case, n_rep = passed.shape
    c, k, r = (a.ravel() for a in np.meshgrid(np.arange(n_cond), np.arange(n_case),
                                              np.arange(n_rep), indexing="ij"))
    value = passed.ravel().astype(float)
    cids = np.array([_cid(lv) for lv in conds], dtype=object)[c]
    base = {"eval": "example", "run_id": [f"{x}-r{y + 1}" for x, y in zip(cids, r, strict=True)],
            "condition_id": cids,
            **{f: np.array([lv[f] for lv in conds], dtype=object)[c] for f in conds[0]},
            "replication": r + 1, "case_id": np.array(ids, dtype=object)[k],
            "errored": False, "case_status": "ok", "latency_s": 1.0, "cost_usd": 0.01,
            "case_hash": np.array([f"h-{i}" for i in ids], dtype=object)[k],
            "value": value, "normalized": value}
    parts = [pd.DataFrame({**base, "judge": "correct", "kind": "boolean"}),
             pd.DataFrame({**base, "judge": "composite", "kind": "composite"})]
    frame = pd.concat(parts, ignore_index=True)
    frame.attrs.update(factors=list(conds[0]), issues=[], case_tags={},
                       levels={f: list(dict.fromkeys(lv[f] for lv in conds)) for f in conds[0]})
    return frame


def _draw(rng: np.random.Generator, base: np.ndarray, sd: np.ndarray, n_rep: int,
          degrade: float, noise: np.ndarray | None) -> np.ndarray:
    """passed[condition, case, replication]; ``noise`` fixed: a deterministic app."""
    if noise is None:
        eps = rng.normal(size=(*base.shape, n_rep)) * sd[None, :, None]
        logit = base[..., None] - degrade + eps
        return rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))
    return (base[..., None] - degrade + noise) > 0.0


def _one(task: tuple[str, int, float, int]) -> dict[str, bool]:
    """One simulated rerun: baseline + new runs -> comparisons -> each gate rule."""
    from eval_harness.analysis.compare.build import build_comparisons
    from eval_harness.analysis.compare.gate import gate

    scenario, n_rep, degrade, seed = task
    rng = np.random.default_rng(seed)
    conds, ids, base, sd = _design()
    noise = (rng.normal(size=(*base.shape, 1)) * sd[None, :, None]
             if scenario == "deterministic" else None)
    old = _frame(conds, ids, _draw(rng, base, sd, n_rep, 0.0, noise))
    new = _frame(conds, ids, _draw(rng, base, sd, n_rep, degrade, noise))
    doc = build_comparisons(new, baseline_frame=old, n_bootstrap=50)
    return {rule: gate(doc, True, rule=rule)[0] for rule in RULES}


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score 95% interval of k successes in n."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


SCENARIOS = (
    ("noisy agent, unchanged (false alarm)", "noisy", 2, 0.0),
    ("noisy agent, EXAMPLE_AGENT_DEGRADE=1.0 (power)", "noisy", 2, 1.0),
    ("deterministic agent, unchanged (false alarm)", "deterministic", 1, 0.0),
    ("deterministic agent, degrade 1.0 (power)", "deterministic", 1, 1.0),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reruns", type=int, default=400, help="simulated reruns per scenario")
    p.add_argument("--workers", type=int, default=1, help="processes")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args(argv)
    print(f"gate simulation: 8 conditions x 32 cases, {args.reruns} reruns per scenario, "
          f"seed {args.seed}, alpha 0.05; rate of failed gates [Wilson 95% CI]")
    print(f"{'scenario':<48}" + "".join(f"{'--gate ' + r:>26}" for r in RULES))
    with ProcessPoolExecutor(args.workers) as pool:
        for s_i, (title, scenario, n_rep, degrade) in enumerate(SCENARIOS):
            seeds = np.random.SeedSequence([args.seed, s_i]).generate_state(args.reruns)
            tasks = [(scenario, n_rep, degrade, int(s)) for s in seeds]
            results = list(pool.map(_one, tasks, chunksize=8))
            cells = []
            for rule in RULES:
                k = sum(r[rule] for r in results)
                lo, hi = wilson(k, len(results))
                cells.append(f"{k / len(results):.3f} [{lo:.3f}, {hi:.3f}]")
            print(f"{title:<48}" + "".join(f"{c:>26}" for c in cells))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
