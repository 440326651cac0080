"""Seeded unbalanced designs (long CSV) for the random-slopes R reference tests.

Run from this directory: python make_unbalanced.py  (writes ../data/u*.csv). Each design
draws case intercepts, by-case slopes per within-case term (sd 0 = a zero variance
component), noise, then deletes a fraction of the case × cell means at random.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "data"


def make(name: str, levels: dict[str, list[str]], n: int, seed: int, *, case_sd: float,
         slope_sd: float, noise: float, missing: float, effect: float = 0.4) -> None:
    rng = np.random.default_rng(seed)
    names = list(levels)
    cells = list(itertools.product(*levels.values()))
    # sum-to-zero codes of the first level of every factor: +1 / -1 / 0
    codes = np.array([[1.0 if c[j] == levels[f][0] else (-1.0 if c[j] == levels[f][-1] else 0.0)
                       for j, f in enumerate(names)] for c in cells])
    rows = []
    for i in range(n):
        u0 = rng.normal(0, case_sd)
        slopes = rng.normal(0, slope_sd, len(names))
        for c, cell in enumerate(cells):
            mu = effect * codes[c, 0] + 0.2 * codes[c].prod() * (len(names) > 1)
            v = mu + u0 + codes[c] @ slopes + rng.normal(0, noise)
            rows.append({"case_id": f"c{i + 1:02d}", **dict(zip(names, cell, strict=True)),
                         "value": round(float(v), 4)})
    df = pd.DataFrame(rows)
    drop = rng.choice(len(df), round(missing * len(df)), replace=False)
    df.drop(index=drop).to_csv(OUT / f"{name}.csv", index=False)


AB = {"A": ["a1", "a2"], "B": ["b1", "b2"]}
make("u2x2_slopes", AB, 24, 1501, case_sd=1.0, slope_sd=0.7, noise=0.5, missing=0.15)
make("u2x2_noslope", AB, 20, 1502, case_sd=1.0, slope_sd=0.0, noise=0.6, missing=0.20)
make("u3x2", {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}, 16, 1503, case_sd=0.8,
     slope_sd=0.6, noise=0.5, missing=0.10)
make("u2x2x2", {**AB, "C": ["c1", "c2"]}, 14, 1504, case_sd=1.0, slope_sd=0.5, noise=0.5,
     missing=0.20)
make("u4", {"A": ["a1", "a2", "a3", "a4"]}, 12, 1505, case_sd=0.9, slope_sd=0.0, noise=0.7,
     missing=0.25)
make("u2x2_nocase", AB, 18, 1509, case_sd=0.0, slope_sd=0.0, noise=0.8, missing=0.30)
