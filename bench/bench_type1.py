"""Seeded null simulations of the default analysis (`auto`) beside complete-case rm:
per-term rejection rates with Wilson 95 % CIs, Holm family-wise error, and power for a
0.4-SD effect. Parallel (multiprocessing) and resumable: every finished simulation is one
JSON line in the results file, and a rerun only computes the missing ones.

Scenarios (case intercepts sd 1, noise sd 0.5 unless said; slopes on the ±1 / contr.sum
codes; every fixed effect 0 under the null):

- irt3: one 3-level factor, rank-1 case × level heterogeneity (y = u_i + d_i λ_j + e,
  d_i ~ N(0, 1), λ = (−1, 0.2, 0.8): item-response-like), 30 cases, 15 % cells missing;
- ab12: 2×2, 12 cases, 30 % missing, slopes on A and B sd 1;
- ab24: 2×2, 24 cases, 15 % missing, slopes on A, B and A:B sd 1;
- ab2: 2×2, 2 cases, one cell missing (slopes on A and B sd 1);
- het32: complete 3×2, heterogeneous: rank-1 slopes on A (as irt3), slopes on B sd 1,
  A:B × case sd 0.3 (auto → rm with GG);
- het222: complete 2×2×2, slopes A sd 1, B sd 0.5, C sd 0.25, AB sd 0.5;
- mar: 2×2, 24 cases, slopes on A and B sd 1, missing at random given the observed
  data: a cell is missing with probability 0.35 when the case's value in its first cell
  (always observed) is below 0, else 0.05;
- power: ab24's design with A's level means 0.4 SD(y) apart (A's rate is power).

Run (full size, ~8 CPU-min with Kenward–Roger df: 12,000 new simulations took 5.7 min wall
on 2 workers; the table quoted in docs/statistics.md):
    nice -n 10 python3 bench/bench_type1.py --sims 2000 --results /tmp/type1.jsonl
A reduced version runs as a slow test (tests/bench/test_bench_type1.py, --run-slow).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

Z95 = 1.959963984540054


def _levels(shape: tuple[int, ...]) -> dict[str, list[str]]:
    names = "ABC"
    return {names[j]: [f"{names[j].lower()}{i + 1}" for i in range(n)] for j, n in enumerate(shape)}


def _codes(shape: tuple[int, ...]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Cells and, per cell, the contr.sum codes of every factor (±1 for 2 levels)."""
    cells = list(itertools.product(*[range(n) for n in shape]))
    return cells, np.array([[1.0 if c[j] == 0 else -1.0 for j in range(len(shape))] for c in cells])


def _frame(shape: tuple[int, ...], y: np.ndarray, keep: np.ndarray) -> pd.DataFrame:
    levels = _levels(shape)
    cells, _ = _codes(shape)
    n = y.shape[0]
    data: dict[str, Any] = {"case_id": np.repeat([f"c{i}" for i in range(n)], len(cells))}
    for j, (f, lv) in enumerate(levels.items()):
        data[f] = np.tile([lv[c[j]] for c in cells], n)
    data["value"] = y.ravel()
    return pd.DataFrame(data)[keep.ravel()]


def _drop(rng: np.random.Generator, n: int, k: int, frac: float) -> np.ndarray:
    keep = np.ones(n * k, dtype=bool)
    keep[rng.choice(n * k, round(frac * n * k), replace=False)] = False
    return keep.reshape(n, k)


LAMBDA = np.array([-1.0, 0.2, 0.8])


def irt3(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    n = 30
    y = rng.normal(0, 1, (n, 1)) + rng.normal(0, 1, (n, 1)) * LAMBDA + rng.normal(0, 0.5, (n, 3))
    return (3,), y, _drop(rng, n, 3, 0.15)


def _two_by_two(rng: np.random.Generator, n: int, sds: tuple[float, float, float],
                effect: float = 0.0) -> np.ndarray:
    _, codes = _codes((2, 2))
    x = np.column_stack([codes, codes[:, 0] * codes[:, 1]])  # A, B, A:B
    slopes = rng.normal(0, 1, (n, 3)) * np.array(sds)
    return (rng.normal(0, 1, (n, 1)) + slopes @ x.T + effect * codes[:, 0]
            + rng.normal(0, 0.5, (n, 4)))


def ab12(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    return (2, 2), _two_by_two(rng, 12, (1.0, 1.0, 0.0)), _drop(rng, 12, 4, 0.30)


def ab24(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    return (2, 2), _two_by_two(rng, 24, (1.0, 1.0, 1.0)), _drop(rng, 24, 4, 0.15)


def ab2(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    keep = np.ones((2, 4), dtype=bool)
    keep[rng.integers(2), rng.integers(4)] = False
    return (2, 2), _two_by_two(rng, 2, (1.0, 1.0, 0.0)), keep


def het32(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    n = 24
    cells, codes = _codes((3, 2))
    a = np.array([LAMBDA[c[0]] for c in cells])
    y = (rng.normal(0, 1, (n, 1)) + rng.normal(0, 1, (n, 1)) * a
         + rng.normal(0, 1, (n, 1)) * codes[:, 1] + rng.normal(0, 0.3, (n, 6))
         + rng.normal(0, 0.5, (n, 6)))
    return (3, 2), y, np.ones((n, 6), dtype=bool)


def het222(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    n = 20
    _, codes = _codes((2, 2, 2))
    x = np.column_stack([codes, codes[:, 0] * codes[:, 1]])
    slopes = rng.normal(0, 1, (n, 4)) * np.array([1.0, 0.5, 0.25, 0.5])
    y = rng.normal(0, 1, (n, 1)) + slopes @ x.T + rng.normal(0, 0.5, (n, 8))
    return (2, 2, 2), y, np.ones((n, 8), dtype=bool)


def mar(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    n = 24
    y = _two_by_two(rng, n, (1.0, 1.0, 0.0))
    p_miss = np.where(y[:, :1] < 0.0, 0.35, 0.05) * np.ones((1, 4))
    keep = rng.random((n, 4)) >= p_miss
    keep[:, 0] = True
    return (2, 2), y, keep


#: SD(y) of ab24's design: √(1 + 3 · 1² + 0.5²)
POWER_SD = math.sqrt(1 + 3 + 0.25)


def power(rng: np.random.Generator) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    # a1 − a2 = 2 · effect on the ±1 code = 0.4 SD(y)
    y = _two_by_two(rng, 24, (1.0, 1.0, 1.0), effect=0.2 * POWER_SD)
    return (2, 2), y, _drop(rng, 24, 4, 0.15)


SCENARIOS: dict[str, Callable[[np.random.Generator], tuple[tuple[int, ...], np.ndarray, np.ndarray]]] = {
    "irt3": irt3, "ab12": ab12, "ab24": ab24, "ab2": ab2, "het32": het32, "het222": het222,
    "mar": mar, "power": power,
}


def simulate(job: tuple[str, int, int]) -> dict[str, Any]:
    """One data set: p-values of auto and of complete-case rm per term (None = excluded)."""
    from eval_harness.analysis.stats import anova_frame
    from eval_harness.analysis.stats.correction import adjust_pvalues

    name, seed, i = job
    rng = np.random.default_rng([seed, list(SCENARIOS).index(name), i])
    shape, y, keep = SCENARIOS[name](rng)
    d = _frame(shape, y, keep)
    levels = _levels(shape)
    out: dict[str, Any] = {"scenario": name, "i": i}
    for method in ("auto", "rm"):
        try:
            res, _ = anova_frame(d, list(levels), method=method, levels=levels)
        except Exception as exc:  # a crash is a result here, counted and shown
            out[method] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        p = {t: r.p_raw for t, r in res.terms.items()}
        finite = [t for t in p if math.isfinite(p[t])]
        holm = adjust_pvalues(np.array([p[t] for t in finite]), "holm") if finite else []
        out[method] = {"method": res.method, "p": p,
                       "holm_any": bool(any(h < 0.05 for h in holm)),
                       "excluded": [e.term for e in res.excluded_terms]}
    return out


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    ph = k / n
    den = 1 + Z95**2 / n
    mid = (ph + Z95**2 / (2 * n)) / den
    half = Z95 * math.sqrt(ph * (1 - ph) / n + Z95**2 / (4 * n * n)) / den
    return mid - half, mid + half


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run(names: Iterable[str], sims: int, seed: int, results: Path, workers: int) -> None:
    done = {(r["scenario"], r["i"]) for r in _read(results)}
    jobs = [(n, seed, i) for n in names for i in range(sims) if (n, i) not in done]
    if not jobs:
        return
    t0 = time.perf_counter()
    with results.open("a") as fh, multiprocessing.Pool(workers) as pool:
        for k, row in enumerate(pool.imap_unordered(simulate, jobs, chunksize=8)):
            fh.write(json.dumps(row) + "\n")
            if k % 200 == 199:
                fh.flush()
                print(f"  {k + 1}/{len(jobs)} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)


def _cell(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]" if n else "—"


def table(rows: list[dict[str, Any]], names: Iterable[str], sims: int) -> tuple[str, bool]:
    """Markdown table and whether every null CI (auto) contains 5 % with Holm ≤ 5 %."""
    lines = ["| scenario | term | auto: rate [95 % CI] | auto: method, excluded | "
             "complete-case rm: rate [95 % CI] |", "|---|---|---|---|---|"]
    ok = True
    for name in names:
        rs = [r for r in rows if r["scenario"] == name and r["i"] < sims]
        if not rs:
            continue
        terms = sorted({t for r in rs for m in ("auto", "rm") for t in
                        list(r[m].get("p", {})) + r[m].get("excluded", [])}, key=lambda t: (t.count(":"), t))
        for m in ("auto", "rm"):
            errs = sum("error" in r[m] for r in rs)
            if errs:
                lines.append(f"| {name} | (errors under {m}) | {errs} of {len(rs)} | | |")
                ok = False
        for t in terms:
            cells = []
            for m in ("auto", "rm"):
                tested = [r[m]["p"][t] for r in rs if t in r[m].get("p", {})]
                k = sum(p < 0.05 for p in tested)
                cells.append((k, len(tested)))
            (ka, na), (kr, nr) = cells
            methods = sorted({r["auto"].get("method", "?") for r in rs})
            excl = len(rs) - na
            lines.append(f"| {name} | {t} | {_cell(ka, na)} | {'/'.join(methods)}, "
                         f"{100 * excl / len(rs):.0f} % excluded | {_cell(kr, nr)} |")
            if name != "power" and na:
                lo, hi = wilson(ka, na)
                ok = ok and lo <= 0.05 <= hi
        if name != "power":
            for m in ("auto", "rm"):
                tested = [r for r in rs if r[m].get("p")]
                k = sum(r[m]["holm_any"] for r in tested)
                if m == "auto" and tested:
                    lo, _ = wilson(k, len(tested))
                    ok = ok and lo <= 0.05
                lines.append(f"| {name} | Holm FWER ({m}) | {_cell(k, len(tested))} | | |")
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sims", type=int, default=2000, help="simulations per scenario")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--results", type=Path, default=Path("type1_results.jsonl"),
                    help="JSON lines, appended; a rerun resumes")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)
    names = [n for n in args.scenarios.split(",") if n]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"error: unknown scenario(s) {unknown}; choose from {list(SCENARIOS)}", file=sys.stderr)
        return 2
    t0 = time.process_time()
    run(names, args.sims, args.seed, args.results, args.workers)
    text, ok = table(_read(args.results), names, args.sims)
    print(text)
    print(f"\n{args.sims} simulations per scenario, seed {args.seed}; every null rate's CI "
          f"contains 5 % and Holm FWER ≤ 5 %: {'yes' if ok else 'NO'} "
          f"(parent CPU {time.process_time() - t0:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
