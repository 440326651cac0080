"""Generate the small seeded datasets used as R reference inputs (long CSV)."""
from __future__ import annotations

import itertools
import pathlib

import numpy as np
import pandas as pd

OUT = pathlib.Path("/work/main/tests/analysis/stats/data")
OUT.mkdir(parents=True, exist_ok=True)

def make(name, levels, n, seed, slope_sd=0.6, case_sd=1.0, effects=None, drop=0, noise=1.0):
    rng = np.random.default_rng(seed)
    names = list(levels)
    cells = list(itertools.product(*levels.values()))
    rows = []
    case_int = rng.normal(0, case_sd, n)
    # case x cell random deviations with unequal variance -> non-sphericity
    cell_scale = np.linspace(0.5, 1.5, len(cells))
    for i in range(n):
        slopes = rng.normal(0, slope_sd, len(cells)) * cell_scale
        for c, cell in enumerate(cells):
            mu = 0.0 if effects is None else effects(dict(zip(names, cell, strict=True)))
            v = mu + case_int[i] + slopes[c] + rng.normal(0, noise) * cell_scale[c]
            rows.append({"case_id": f"c{i+1:02d}", **dict(zip(names, cell, strict=True)), "value": round(v, 3)})
    df = pd.DataFrame(rows)
    if drop:
        idx = rng.choice(len(df), drop, replace=False)
        df = df.drop(index=idx)
    df.to_csv(OUT / f"{name}.csv", index=False)
    return df

make("d2x2", {"A": ["a1", "a2"], "B": ["b1", "b2"]}, 12, 101,
     effects=lambda d: 0.5 * (d["A"] == "a2") + 0.3 * (d["A"] == "a2") * (d["B"] == "b2"))
make("d3x2", {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}, 10, 202,
     effects=lambda d: {"a1": 0, "a2": 0.4, "a3": 0.9}[d["A"]] + 0.2 * (d["B"] == "b2"))
make("d4", {"A": ["a1", "a2", "a3", "a4"]}, 8, 303,
     effects=lambda d: {"a1": 0, "a2": 0.3, "a3": 0.2, "a4": 1.0}[d["A"]])
make("d2x2x2", {"A": ["a1", "a2"], "B": ["b1", "b2"], "C": ["c1", "c2"]}, 10, 404,
     effects=lambda d: 0.6 * (d["A"] == "a2") - 0.4 * (d["C"] == "c2") * (d["B"] == "b2"))
# negative case-variance estimate (boundary for lmer): no case intercept, anti-correlated cells
make("dboundary", {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}, 9, 506, case_sd=0.0, slope_sd=0.2,
     effects=lambda d: 0.5 * (d["A"] == "a3"))
make("dunbal", {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}, 14, 606, drop=11,
     effects=lambda d: {"a1": 0, "a2": 0.5, "a3": 0.8}[d["A"]] + 0.3 * (d["B"] == "b2"))
