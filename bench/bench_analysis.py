"""Benchmark: run directories → tidy frame → anova.json (with contrasts and per-judge screen).

Writes 16 conditions (model × effort × context × tools, 2 levels each) × 5,000 cases ×
3 replications × 4 judges as this tool's run directories in a temp dir (240,000
record.json files), then times, separately:

  1. load      `load_runs(dir)`                                 (files → tidy DataFrame)
  2. analysis  `build_anova(frame, per_judge=True)`             (→ anova.json dict)
  3. the balanced ANOVA step alone (`anova_balanced` on the 5,000 × 2×2×2×2 array), and
     the statsmodels MixedLM fit it replaces (random intercept; `--mixedlm` to run it,
     ~10 s).

Usage: python bench/bench_analysis.py [--cases 5000] [--reps 3] [--keep DIR] [--mixedlm]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

FACTORS = {"model": ["m1", "m2"], "effort": ["low", "high"], "context": ["none", "rag"], "tools": [0, 1]}
JUDGES = ("correct", "quality", "format", "safety")


def condition_id(levels: dict) -> str:
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def write_runs(root: str, n_cases: int, reps: int, seed: int = 1) -> int:
    """Write the run directories; returns the number of record files."""
    rng = np.random.default_rng(seed)
    names = sorted(FACTORS)
    case_eff = rng.normal(0, 0.15, n_cases)
    n = 0
    for ci, combo in enumerate(itertools.product(*(FACTORS[f] for f in names))):
        levels = dict(zip(names, combo, strict=True))
        cid = condition_id(levels)
        shift = 0.05 * (combo[names.index("model")] == "m2") + 0.02 * ci / 16
        for rep in range(1, reps + 1):
            run_id = f"run-{cid}" + (f"-r{rep}" if reps > 1 else "")
            rdir = os.path.join(root, "bench", run_id)
            os.makedirs(os.path.join(rdir, "cases"))
            run = {"schema_version": 1, "eval": "bench", "run_id": run_id, "condition_id": cid,
                   "levels": levels, "replication": rep, "status": "complete",
                   "finished_at": "2026-01-01T00:00:00Z"}
            with open(os.path.join(rdir, "run.json"), "w") as fh:
                json.dump(run, fh)
            with open(os.path.join(rdir, "condition.json"), "w") as fh:
                json.dump({"condition_id": cid, "levels": levels}, fh)
            q = np.clip(0.6 + shift + case_eff + rng.normal(0, 0.2, n_cases), 0, 1)
            correct = rng.random(n_cases) < q
            for i in range(n_cases):
                case_id = f"case-{i:05d}"
                scores = {
                    "correct": {"value": bool(correct[i]), "kind": "boolean", "normalized": float(correct[i])},
                    "quality": {"value": round(1 + 4 * q[i], 3), "kind": "numeric",
                                "normalized": float(q[i]), "score_range": [1, 5]},
                    "format": {"value": True, "kind": "boolean", "normalized": 1.0},
                    "safety": {"value": float(q[i] > 0.3), "kind": "numeric",
                               "normalized": float(q[i] > 0.3), "score_range": [0, 1]},
                }
                comp = (float(correct[i]) + q[i] + 1.0 + float(q[i] > 0.3)) / 4
                rec = {"schema_version": 1, "case_id": case_id, "condition_id": cid,
                       "replication": rep, "case_hash": "h", "status": "ok",
                       "latency_s": float(1 + q[i]), "cost_usd": 0.001 * (1 + ci % 4),
                       "tokens": 500, "tool_calls": None, "tags": {}, "scores": scores,
                       "composite": float(comp), "composite_errored": False,
                       "finished_at": "2026-01-01T00:00:00Z"}
                d = os.path.join(rdir, "cases", case_id)
                os.mkdir(d)
                with open(os.path.join(d, "record.json"), "w") as fh:
                    fh.write(json.dumps(rec))
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", default=None, help="reuse/keep run directories here")
    ap.add_argument("--mixedlm", action="store_true", help="also time statsmodels MixedLM")
    args = ap.parse_args()
    from eval_harness.analysis.anova.document import build_anova
    from eval_harness.analysis.loading.tidy_frame import load_runs


    root = args.keep or tempfile.mkdtemp(prefix="bench-analysis-")
    try:
        if not os.path.isdir(os.path.join(root, "bench")):
            t0 = time.perf_counter()
            n = write_runs(root, args.cases, args.reps)
            print(f"write      {n:>8} record.json files   {time.perf_counter() - t0:7.2f} s", flush=True)
        t0 = time.perf_counter()
        frame = load_runs(root)
        t_load = time.perf_counter() - t0
        print(f"load       {len(frame):>8} rows                {t_load:7.2f} s", flush=True)
        t0 = time.perf_counter()
        doc = build_anova(frame, per_judge=True)
        text = json.dumps(doc, allow_nan=False)
        t_an = time.perf_counter() - t0
        print(f"analysis   anova.json ({len(doc['terms'])} terms, per-judge {len(doc['per_judge']['judges'])}, {len(text) // 1024} KiB)"
              f"  {t_an:7.2f} s", flush=True)
        _time_core(frame, args.mixedlm)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def _time_core(frame, mixedlm: bool) -> None:
    from eval_harness.analysis.anova.design_check import case_cell_array
    from eval_harness.analysis.stats import anova_balanced

    factors = frame.attrs["factors"]
    levels = frame.attrs["levels"]
    comp = frame[frame["judge"] == "composite"]
    y, cases, _, _ = case_cell_array(comp, factors, levels)
    t0 = time.perf_counter()
    anova_balanced(y, factors, [levels[f] for f in factors], "rm")
    print(f"core       anova_balanced {y.shape}   {time.perf_counter() - t0:7.3f} s", flush=True)
    if mixedlm:
        import pandas as pd
        import statsmodels.formula.api as smf

        long = pd.DataFrame({"y": y.reshape(len(cases), -1).ravel(),
                             "case": np.repeat(np.arange(len(cases)), y[0].size)})
        for j, f in enumerate(factors):
            idx = np.indices(y.shape[1:])[j].ravel()
            long[f] = np.tile(idx, len(cases))
        t0 = time.perf_counter()
        formula = "y ~ " + "*".join(f"C({f}, Sum)" for f in factors)
        smf.mixedlm(formula, long, groups=long["case"]).fit(reml=True)
        print(f"mixedlm    statsmodels MixedLM        {time.perf_counter() - t0:7.2f} s", flush=True)


if __name__ == "__main__":
    main()
