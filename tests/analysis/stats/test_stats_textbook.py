"""A published two-way within-subjects table reproduced exactly.

Source: Maxwell, S. E. & Delaney, H. D. (2004), *Designing Experiments and Analyzing
Data*, 2nd ed., Table 12.1 (p. 574, hypothetical reaction times, 10 subjects,
angle 0°/4°/8° × noise absent/present; also R `afex::md_12.1`) and its ANOVA summary
in the same chapter (Table 12.5): SS angle = 289,920 with SS angle×S = 64,080,
F(2, 18) = 40.72; SS noise = 285,660 with SS noise×S = 76,140, F(1, 9) = 33.77;
SS angle×noise = 105,120 with SS angle×noise×S = 20,880, F(2, 18) = 45.31.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from eval_harness.analysis.stats import anova_balanced, anova_frame

# rows = subjects 1..10; columns: noise absent at 0°, 4°, 8°, then noise present at 0°, 4°, 8°
TABLE_12_1 = np.array([
    [420, 420, 480, 480, 600, 780],
    [420, 480, 480, 360, 480, 600],
    [480, 480, 540, 660, 780, 780],
    [420, 540, 540, 480, 780, 900],
    [540, 660, 540, 480, 660, 720],
    [360, 420, 360, 360, 480, 540],
    [480, 480, 600, 540, 720, 840],
    [480, 600, 660, 540, 720, 900],
    [540, 600, 540, 480, 720, 780],
    [480, 420, 540, 540, 660, 780],
], dtype=float)

PUBLISHED = {  # term: (SS, SS error, F rounded to 2 decimals, df_num, df_den)
    "angle": (289_920.0, 64_080.0, 40.72, 2, 18),
    "noise": (285_660.0, 76_140.0, 33.77, 1, 9),
    "angle:noise": (105_120.0, 20_880.0, 45.31, 2, 18),
}


def test_maxwell_delaney_table_12_1() -> None:
    # (subject, noise, angle) -> reorder to (subject, angle, noise), factors written angle first
    y = TABLE_12_1.reshape(10, 2, 3).transpose(0, 2, 1)
    res = anova_balanced(y, ["angle", "noise"], [[0, 4, 8], ["absent", "present"]])
    for term, (ss, ss_err, f_val, df_num, df_den) in PUBLISHED.items():
        t = res.terms[term]
        assert np.isclose(t.ss, ss, rtol=1e-12) and np.isclose(t.ss_error, ss_err, rtol=1e-12)
        assert round(t.F, 2) == f_val
        assert (t.df_num, t.df_den) == (df_num, df_den)
    # afex on md_12.1 (R 4.2.2, afex 1.2.1):
    # anova(aov_ez("id", "rt", md_12.1, within = c("angle", "noise")), es = "pes")
    # -> GG df angle 1.9233, angle:noise 1.8080; pes 0.81898, 0.78955, 0.83429
    assert np.isclose(2 * res.terms["angle"].gg_epsilon, 1.9233, atol=5e-5)
    assert np.isclose(2 * res.terms["angle:noise"].gg_epsilon, 1.8080, atol=5e-5)
    assert [round(res.terms[t].partial_eta_sq, 5) for t in PUBLISHED] == [0.81898, 0.78955, 0.83429]


def test_same_table_through_the_tidy_frame() -> None:
    rows = [
        {"case_id": f"s{i + 1}", "noise": noise, "angle": angle, "value": TABLE_12_1[i, 3 * k + j]}
        for i in range(10)
        for k, noise in enumerate(["absent", "present"])
        for j, angle in enumerate([0, 4, 8])
    ]
    res, dropped = anova_frame(pd.DataFrame(rows), ["angle", "noise"])
    assert dropped == [] and res.levels == {"angle": (0, 4, 8), "noise": ("absent", "present")}
    assert round(res.terms["angle:noise"].F, 2) == 45.31
