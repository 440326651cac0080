"""Per-judge screen, replication variance, frame handling of replications."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats import (
    adjust_pvalues,
    anova_balanced,
    anova_frame,
    per_judge_screen,
    replication_variance,
)


def tidy(y: np.ndarray, reps: int = 1, seed: int = 0, rep_sd: float = 0.0) -> pd.DataFrame:
    """Long rows from an (n, 2, 2) array, with optional noisy replications."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(y.shape[0]):
        for a in range(2):
            for b in range(2):
                noise = rng.normal(0, rep_sd, reps) if rep_sd else np.zeros(reps)
                noise -= noise.mean()  # replicate mean equals y exactly
                for r in range(reps):
                    rows.append({"case_id": f"c{i}", "model": f"m{a}", "effort": ["low", "high"][b],
                                 "replication": r + 1, "value": y[i, a, b] + noise[r]})
    return pd.DataFrame(rows)


def test_replications_are_averaged_before_the_anova() -> None:
    y = np.random.default_rng(1).normal(size=(10, 2, 2))
    res1, _ = anova_frame(tidy(y), ["model", "effort"])
    res3, _ = anova_frame(tidy(y, reps=3, rep_sd=0.5), ["model", "effort"])
    for term, t in res1.terms.items():
        assert np.isclose(res3.terms[term].F, t.F, rtol=1e-10)
    assert res1.levels == {"model": ("m0", "m1"), "effort": ("low", "high")}


def test_replication_variance_is_pooled_within_cell_variance() -> None:
    y = np.zeros((30, 2, 2))
    df = tidy(y, reps=4, seed=2, rep_sd=0.7)
    got = replication_variance(df, ["model", "effort"])
    groups = df.groupby(["case_id", "model", "effort"])["value"]
    expected = float(groups.var(ddof=1).mean())  # equal group sizes: pooled = mean of variances
    assert got is not None and np.isclose(got, expected, rtol=1e-12)
    assert replication_variance(tidy(y), ["model", "effort"]) is None


def test_per_judge_screen_pools_all_judges_in_one_bh_family() -> None:
    rng = np.random.default_rng(9)
    ok1 = rng.normal(size=(12, 2, 2)) + np.array([[0, 0], [0.8, 0.8]])
    ok2 = rng.normal(size=(12, 2, 2))
    frames = {"quality": tidy(ok1), "style": tidy(ok2), "always_true": tidy(np.ones((12, 2, 2)))}
    screen = per_judge_screen(frames, ["model", "effort"])
    assert [e.judge for e in screen.excluded] == ["always_true"]
    assert "constant" in screen.excluded[0].reason
    assert screen.family_size == 6 and screen.correction == "bh"
    raw = [anova_balanced(y, ["model", "effort"], [["m0", "m1"], ["low", "high"]]).terms[t].p_raw
           for y in (ok1, ok2) for t in ("model", "effort", "model:effort")]
    expected = adjust_pvalues(raw, "bh")
    got = [screen.p_adjusted[j][t] for j in ("quality", "style") for t in ("model", "effort", "model:effort")]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert screen.significant["quality"]["model"] == (screen.p_adjusted["quality"]["model"] < 0.05)


def test_keep_incomplete_requires_lmm() -> None:
    with pytest.raises(ValueError, match="lmm"):
        anova_frame(tidy(np.zeros((3, 2, 2))), ["model", "effort"], keep_incomplete=True)


def test_per_judge_screen_passes_the_mixed_ddf() -> None:
    from pathlib import Path

    from eval_harness.analysis.stats.per_judge import per_judge_screen

    d = pd.read_csv(Path(__file__).parent / "data" / "u3x2.csv")
    levels = {f: sorted(d[f].unique()) for f in "AB"}
    kr = per_judge_screen({"j": d}, ["A", "B"], method="mixed", levels=levels)
    sw = per_judge_screen({"j": d}, ["A", "B"], method="mixed", levels=levels,
                          ddf="satterthwaite")
    assert "Kenward–Roger" in kr.results["j"].label and "Satterthwaite" in sw.results["j"].label
    assert kr.results["j"].terms["A"].df_den != pytest.approx(sw.results["j"].terms["A"].df_den)
