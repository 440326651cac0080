"""Issue 22, "effect sizes change meaning with the method": `--method lmm` reported partial
η² 0.082 for `model` where `rm` gave 0.430 on the same data, with no word why. Now every
term also carries generalized η² (R afex `ges`), the same under every method, and partial
η² is labelled with its error term."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from eval_harness.analysis.anova.document import build_anova
from eval_harness.analysis.stats.effect_size import generalized_eta_squared

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # rundir_writer, for test_build
from tests.analysis.anova.test_document import frame_from


def _afex_data() -> np.ndarray:
    """The data of the R call below: 8 cases × a (2) × b (3)."""
    y = np.zeros((8, 2, 3))
    for i, a, b in itertools.product(range(1, 9), range(1, 3), range(1, 4)):
        y[i - 1, a - 1, b - 1] = ((7 * i + 3 * a * b + i * b) % 11) / 10 + 0.05 * a
    return y


def test_ges_equals_afex() -> None:
    # R 4.x, afex 1.2.1:
    #   d <- expand.grid(case = factor(1:8), a = factor(c("a1","a2")), b = factor(c("b1","b2","b3")))
    #   i <- as.integer(d$case); ai <- as.integer(d$a); bi <- as.integer(d$b)
    #   d$y <- ((7 * i + 3 * ai * bi + i * bi) %% 11) / 10 + 0.05 * ai
    #   aov_ez("case", "y", d, within = c("a", "b"),
    #          anova_table = list(es = c("ges", "pes"), correction = "GG"))$anova_table
    #   ges: a 0.027272727273, b 0.008781240953, a:b 0.029203288914
    #   pes: a 0.09022556391,  b 0.02261431412,  a:b 0.08640939597
    ges = generalized_eta_squared(_afex_data(), ["a", "b"])
    assert ges == pytest.approx({"a": 0.027272727273, "b": 0.008781240953,
                                 "a:b": 0.029203288914}, abs=1e-11)
    assert generalized_eta_squared(_afex_data()[:1], ["a", "b"]) == {}


def test_ges_is_the_same_under_every_method_and_partial_is_labelled() -> None:
    rng = np.random.default_rng(4)
    # cases react differently to the model (random slopes): rm and lmm partial η² differ
    n = 16
    y = rng.normal(0, 0.3, (n, 1, 2, 3)) + rng.normal(0, 1, (n, 1, 1, 1))
    y[:, :, 1, :] += 0.4 + rng.normal(0, 0.8, (n, 1, 1))
    frame = frame_from(y)
    docs = {m: build_anova(frame, method=m) for m in ("rm", "lmm", "mixed")}
    model = {m: d["terms"]["model"] for m, d in docs.items()}
    assert abs(model["rm"]["partial_eta_sq"] - model["lmm"]["partial_eta_sq"]) > 0.05
    assert model["rm"]["ges"] == pytest.approx(model["lmm"]["ges"], abs=1e-12)
    assert model["rm"]["ges"] == pytest.approx(model["mixed"]["ges"], abs=1e-12)
    assert "term × case" in model["rm"]["partial_eta_sq_error"]
    assert "pooled residual" in model["lmm"]["partial_eta_sq_error"]
    assert "random-slopes model, its denominator df2" in model["mixed"]["partial_eta_sq_error"]
    assert model["rm"]["ges_n_cases"] == n
