"""Time the closed-form ANOVA (16 conditions × 5,000 cases) against statsmodels.

Usage: python bench/bench_anova_step.py [--cases 5000] [--anovarm-cases 60]

Prints the closed form (rm and lmm) time, statsmodels MixedLM (random intercept,
REML, sum-to-zero design) on the same data, AnovaRM on a subset, and the ratios.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout


def make_data(n_cases: int, seed: int = 1) -> tuple[np.ndarray, list[str], list[list[str]]]:
    rng = np.random.default_rng(seed)
    shape = (4, 2, 2)
    y = rng.normal(size=(n_cases, *shape)) + rng.normal(size=(n_cases, 1, 1, 1))
    y += 0.05 * np.arange(4)[None, :, None, None]
    levels = [[f"m{i}" for i in range(4)], ["low", "high"], ["short", "long"]]
    return y, ["model", "effort", "context"], levels


def tidy(y: np.ndarray, factors: list[str], levels: list[list[str]]) -> pd.DataFrame:
    cells = list(itertools.product(*levels))
    flat = y.reshape(y.shape[0], -1)
    df = pd.DataFrame(
        [(f"c{i}", *cell, flat[i, j]) for i in range(y.shape[0]) for j, cell in enumerate(cells)],
        columns=["case_id", *factors, "value"],
    )
    return df


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--anovarm-cases", type=int, default=60)
    args = parser.parse_args()

    from eval_harness.analysis.stats import anova_balanced, anova_frame

    y, factors, levels = make_data(args.cases)
    t_rm, res_rm = timed(lambda: anova_balanced(y, factors, levels, "rm"), repeat=5)
    t_lmm, res_lmm = timed(lambda: anova_balanced(y, factors, levels, "lmm"), repeat=5)
    df = tidy(y, factors, levels)
    t_frame, _ = timed(lambda: anova_frame(df, factors, method="rm"), repeat=3)
    print(f"design: 16 conditions x {args.cases} cases = {y.size} values")
    print(f"closed form rm : {t_rm * 1e3:8.1f} ms   (model F = {res_rm.terms['model'].F:.4f})")
    print(f"closed form lmm: {t_lmm * 1e3:8.1f} ms   (model F = {res_lmm.terms['model'].F:.4f})")
    print(f"anova_frame rm from tidy rows (incl. pivot): {t_frame * 1e3:8.1f} ms")

    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import AnovaRM

    formula = "value ~ C(model, Sum) * C(effort, Sum) * C(context, Sum)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mixed, fit = timed(
            lambda: smf.mixedlm(formula, df, groups=df["case_id"]).fit(reml=True)
        )
    print(f"statsmodels MixedLM (REML, random intercept): {t_mixed:8.2f} s "
          f"-> {t_mixed / t_lmm:,.0f}x the closed-form lmm")
    print(f"  MixedLM residual variance {fit.scale:.6f} vs closed form {res_lmm.residual_variance:.6f}")

    sub = df[df["case_id"].isin([f"c{i}" for i in range(args.anovarm_cases)])]
    y_sub = y[: args.anovarm_cases]
    t_sub, res_sub = timed(lambda: anova_balanced(y_sub, factors, levels, "rm"), repeat=5)
    t_arm, arm = timed(lambda: AnovaRM(sub, "value", "case_id", within=factors).fit())
    f_arm = float(arm.anova_table.loc["model", "F Value"])
    print(f"AnovaRM on {args.anovarm_cases} cases: {t_arm:8.2f} s vs closed form {t_sub * 1e3:.1f} ms "
          f"-> {t_arm / t_sub:,.0f}x (model F {f_arm:.6f} vs {res_sub.terms['model'].F:.6f})")


if __name__ == "__main__":
    main()
