"""The random-slopes mixed model (method `mixed`) against R on 6 unbalanced designs.

Data: data/u*.csv, written by r_reference/make_unbalanced.py (seeded; 10–30% of the case ×
cell means deleted; u2x2_noslope has a zero slope variance, u2x2_nocase zero case and slope
variances and ends in a boundary fit). Reference values: r_reference/random_slopes.R
(R 4.2.2, lme4 1.1.31, lmerTest 3.1.3, emmeans 1.8.4.1), which applies the structure rule
with R's own isSingular() and prints the lines below verbatim. Global R settings:
options(contrasts = c("contr.sum", "contr.poly")); lmerControl(optimizer = "nloptwrap",
optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0, ftol_rel = 0)).
Calls: terms — anova(fit, type = 3, ddf = "Satterthwaite"); contrasts —
summary(emmeans(fit, pairwise ~ A, lmer.df = "satterthwaite")$contrasts, infer = TRUE,
adjust = "holm") with confint(..., adjust = "none"); simple effects — the same with
pairwise ~ A | B. We match the REML optimum itself (deviance to 1e-7 relative), so F, df,
p and the contrasts agree to 1e-4 relative (the Satterthwaite df come from numerical
derivatives on both sides; measured agreement ~1e-6).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from eval_harness.analysis.stats import anova_frame
from eval_harness.analysis.stats.slopes import model_contrasts

DATA = Path(__file__).parent / "data"
FACTORS = {"u2x2_slopes": ["A", "B"], "u2x2_noslope": ["A", "B"], "u3x2": ["A", "B"],
           "u2x2x2": ["A", "B", "C"], "u4": ["A"], "u2x2_nocase": ["A", "B"]}
TOL = 1e-4

R_REF: dict[tuple[str, ...], Any] = {
    # lmer(value ~ A*B + (1 + A1 + B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_slopes", "structure"): dict(slopes=["A", "B"], correlated=True, singular=False, reml=263.963161943),
    ("u2x2_slopes", "A"): dict(F=4.32238611386, df_num=            1, df_den= 22.905351681, p=0.0490009077275),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "B"): dict(F=0.00795695450349, df_num=            1, df_den=20.1475247593, p=0.92980233729),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "A:B"): dict(F=13.2938917243, df_num=            1, df_den=14.1357364864, p=0.00260750781377),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "sigma2"): 0.269091847629,  # sigma(fit)^2
    ("u2x2_slopes", "A", "a1 - a2"): dict(estimate=0.642394915039, se=0.308987076241, df= 22.905351681, p_adj=0.0490009077275, lo=0.00306026759328, hi=1.28172956248),
    ("u2x2_slopes", "B", "b1 - b2"): dict(estimate=-0.0314785447868, se=0.352891509824, df=20.1475247593, p_adj=0.92980233729, lo=-0.767251947787, hi=0.704294858213),
    ("u2x2_slopes", "A|B", "a1 - a2@b1"): dict(estimate=1.10290745644, se=0.326141259576, df=27.6789543474, p_adj=0.00216301330539, lo=0.434488097218, hi=1.77132681567),
    ("u2x2_slopes", "A|B", "a1 - a2@b2"): dict(estimate=0.181882373633, se=0.341296139403, df=31.4786492373, p_adj=0.597833795018, lo=-0.513766956118, hi=0.877531703383),
    # lmer(value ~ A*B + (1 + B1 || case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_noslope", "structure"): dict(slopes=["B"], correlated=False, singular=False, reml=154.684352135),
    ("u2x2_noslope", "A"): dict(F=53.5082496427, df_num=            1, df_den= 31.276153418, p=2.95515296562e-08),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "B"): dict(F=0.872981801559, df_num=            1, df_den=17.2129364131, p=0.363054293376),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "A:B"): dict(F=10.6602321384, df_num=            1, df_den=31.2596078571, p=0.00265491513149),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "sigma2"): 0.311957869931,  # sigma(fit)^2
    ("u2x2_noslope", "A", "a1 - a2"): dict(estimate=1.07172326817, se=0.14651169322, df= 31.276153418, p_adj=2.95515296562e-08, lo=0.773017598826, hi=1.37042893752),
    ("u2x2_noslope", "B", "b1 - b2"): dict(estimate=0.146989160937, se= 0.1573195573, df=17.2129364131, p_adj=0.363054293376, lo=-0.184613585306, hi=0.47859190718),
    ("u2x2_noslope", "A|B", "a1 - a2@b1"): dict(estimate= 1.5507465278, se=0.204006672024, df=31.0142616012, p_adj=1.42880675513e-08, lo= 1.1346799316, hi=  1.966813124),
    ("u2x2_noslope", "A|B", "a1 - a2@b2"): dict(estimate=0.592700008547, se=0.210625177596, df=31.5074084622, p_adj=0.00835870746188, lo=0.163407345465, hi=1.02199267163),
    # lmer(value ~ A*B + (1 + A1 + A2 + B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u3x2", "structure"): dict(slopes=["A", "B"], correlated=True, singular=False, reml=248.709736624),
    ("u3x2", "A"): dict(F=2.61802565167, df_num=            2, df_den=14.3316221905, p=0.107366346278),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "B"): dict(F=0.161188710944, df_num=            1, df_den=14.8295766124, p=0.693790507844),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "A:B"): dict(F=3.13918463882, df_num=            2, df_den=25.4889161466, p=0.0604315281315),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "sigma2"): 0.224406631158,  # sigma(fit)^2
    ("u3x2", "A", "a1 - a2"): dict(estimate=0.367101300524, se=0.215251869936, df=13.2107012061, p_adj=0.20582978903, lo=-0.0971692772069, hi=0.831371878256),
    ("u3x2", "A", "a1 - a3"): dict(estimate=0.730687957796, se=0.319434180734, df=15.5670446359, p_adj=0.109610952035, lo=0.0519838530712, hi=1.40939206252),
    ("u3x2", "A", "a2 - a3"): dict(estimate=0.363586657271, se=0.208551249229, df=14.1680713294, p_adj=0.20582978903, lo=-0.0832139938207, hi=0.810387308364),
    ("u3x2", "B", "b1 - b2"): dict(estimate=0.154077005234, se=0.383769647233, df=14.8295766829, p_adj=0.693790578026, lo=-0.664728142613, hi=0.97288215308),
    ("u3x2", "A|B", "a1 - a2@b1"): dict(estimate=0.635770150438, se=0.251148995742, df=21.8313804271, p_adj=0.0381535567572, lo=0.114685667762, hi=1.15685463311),
    ("u3x2", "A|B", "a1 - a3@b1"): dict(estimate=1.02023304671, se=0.348819095435, df=21.2341533518, p_adj=0.0241043424952, lo=0.295310789847, hi=1.74515530357),
    ("u3x2", "A|B", "a2 - a3@b1"): dict(estimate=0.384462896273, se=0.255506424873, df=26.5181639216, p_adj= 0.1442174858, lo=-0.140239063842, hi=0.909164856388),
    ("u3x2", "A|B", "a1 - a2@b2"): dict(estimate=0.0984324506112, se=0.253744620998, df=23.0735729832, p_adj=0.701631457135, lo=-0.426385691499, hi=0.623250592722),
    ("u3x2", "A|B", "a1 - a3@b2"): dict(estimate=0.441142868881, se=0.340320796403, df= 19.658849175, p_adj=0.504780287442, lo=-0.26954445339, hi=1.15183019115),
    ("u3x2", "A|B", "a2 - a3@b2"): dict(estimate=0.34271041827, se=0.241146431667, df=23.7591287798, p_adj=0.504780287442, lo=-0.155258505484, hi=0.840679342024),
    # lmer(value ~ A*B*C + (1 + A1 + B1 + C1 + A1_C1 || case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2x2", "structure"): dict(slopes=["A", "B", "C", "A:C"], correlated=False, singular=False, reml=265.133870521),
    ("u2x2x2", "A"): dict(F=3.65274747328, df_num=            1, df_den=13.2799451693, p=0.0778018380879),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "B"): dict(F=0.718933277192, df_num=            1, df_den=13.2965084981, p=0.411497749444),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "C"): dict(F= 5.3336340121, df_num=            1, df_den=12.1988957334, p=0.0391892452176),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:B"): dict(F=0.296499611062, df_num=            1, df_den= 30.514250946, p=0.590042704699),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:C"): dict(F=0.913017645461, df_num=            1, df_den=14.3831524062, p=0.355100197381),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "B:C"): dict(F=2.17398623721, df_num=            1, df_den=31.2852361638, p=0.150354723275),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:B:C"): dict(F=11.7625363528, df_num=            1, df_den= 31.370265998, p=0.00171192804119),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "sigma2"): 0.288240343748,  # sigma(fit)^2
    ("u2x2x2", "A", "a1 - a2"): dict(estimate=0.61686014167, se=0.322757902727, df=13.2799451693, p_adj=0.0778018380879, lo=-0.0789246815957, hi=1.31264496494),
    ("u2x2x2", "B", "b1 - b2"): dict(estimate=0.23811251631, se=0.280826399226, df=13.2965084981, p_adj=0.411497749444, lo=-0.367203636716, hi=0.843428669336),
    ("u2x2x2", "C", "c1 - c2"): dict(estimate=-0.452035281192, se=0.195731501134, df=12.1988957334, p_adj=0.0391892452176, lo=-0.877727686136, hi=-0.0263428762484),
    ("u2x2x2", "A|B", "a1 - a2@b1"): dict(estimate=0.683962698536, se=0.346111034776, df=17.2917480592, p_adj=0.0643160269452, lo=-0.0453303506192, hi=1.41325574769),
    ("u2x2x2", "A|B", "a1 - a2@b2"): dict(estimate=0.549757584803, se=0.344855363077, df=17.1951322343, p_adj=0.129112900743, lo=-0.17719517846, hi=1.27671034807),
    # lmer(value ~ A + (1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u4", "structure"): dict(slopes=[], correlated=True, singular=False, reml=66.7019325271),
    ("u4", "A"): dict(F=1.10428373766, df_num=            3, df_den=23.0961044065, p=0.36748066564),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u4", "sigma2"): 0.170605200105,  # sigma(fit)^2
    ("u4", "A", "a1 - a2"): dict(estimate=-0.0271440292614, se=0.206509256108, df=24.0265194976, p_adj=            1, lo=-0.453333292222, hi=0.399045233699),
    ("u4", "A", "a1 - a3"): dict(estimate=0.21932974894, se=0.203116968296, df=22.3375840971, p_adj=            1, lo=-0.201540264344, hi=0.640199762224),
    ("u4", "A", "a1 - a4"): dict(estimate=    0.2693875, se=0.206521911734, df=22.1273685059, p_adj=            1, lo=-0.158769835861, hi=0.697544835861),
    ("u4", "A", "a2 - a3"): dict(estimate=0.246473778202, se=0.197526746834, df=23.8788347135, p_adj=            1, lo=-0.161310887153, hi=0.654258443556),
    ("u4", "A", "a2 - a4"): dict(estimate=0.296531529261, se=0.206509256108, df=24.0265194981, p_adj=0.983501329048, lo=-0.129657733699, hi=0.722720792222),
    ("u4", "A", "a3 - a4"): dict(estimate=0.0500577510599, se=0.203116968296, df=22.3375840974, p_adj=            1, lo=-0.370812262224, hi=0.470927764344),
    # lmer(value ~ A*B + (1 + A1 || case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_nocase", "structure"): dict(slopes=["A"], correlated=False, singular=True, reml=125.440266623),
    ("u2x2_nocase", "A"): dict(F=12.6655364198, df_num=            1, df_den=14.8516550055, p=0.00289618570887),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "B"): dict(F=0.546305276572, df_num=            1, df_den=33.5848514196, p=0.464966102786),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "A:B"): dict(F=10.7401373411, df_num=            1, df_den=30.4819569089, p=0.002620083289),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "sigma2"): 0.531566200525,  # sigma(fit)^2
    ("u2x2_nocase", "A", "a1 - a2"): dict(estimate=0.957872262729, se=0.26915087961, df=14.8516550055, p_adj=0.00289618570887, lo=0.383691256907, hi=1.53205326855),
    ("u2x2_nocase", "B", "b1 - b2"): dict(estimate=0.157683165877, se= 0.2133377121, df=33.5848514196, p_adj=0.464966102786, lo=-0.276068717203, hi=0.591435048956),
    ("u2x2_nocase", "A|B", "a1 - a2@b1"): dict(estimate=1.64776293356, se=0.341666806431, df= 33.028100255, p_adj=3.1015149e-05, lo=0.952659055795, hi=2.34286681132),
    ("u2x2_nocase", "A|B", "a1 - a2@b2"): dict(estimate= 0.2679815919, se=0.341728219977, df=32.9668229823, p_adj=0.438524296297, lo=-0.427296280584, hi=0.963259464383),
}


@pytest.fixture(scope="module")
def fits() -> dict[str, Any]:
    out = {}
    for name, factors in FACTORS.items():
        d = pd.read_csv(DATA / f"{name}.csv")
        levels = {f: sorted(d[f].unique()) for f in factors}
        res, dropped = anova_frame(d, factors, method="mixed", levels=levels)
        assert dropped == [] and res.method == "mixed"
        out[name] = res
    return out


@pytest.mark.parametrize("name", list(FACTORS))
def test_structure_and_optimum_match_r(fits: dict[str, Any], name: str) -> None:
    ref = R_REF[(name, "structure")]
    model = fits[name].model
    assert sorted(":".join(FACTORS[name][j] for j in s) for s in model.slopes) == sorted(ref["slopes"])
    if ref["slopes"]:
        assert model.fit.structure.correlated == ref["correlated"]
    assert model.fit.singular == ref["singular"]
    assert model.fit.deviance == pytest.approx(ref["reml"], rel=1e-7)
    assert fits[name].residual_variance == pytest.approx(R_REF[(name, "sigma2")], rel=TOL)


@pytest.mark.parametrize("name", list(FACTORS))
def test_terms_match_lmertest(fits: dict[str, Any], name: str) -> None:
    res = fits[name]
    terms = [k[1] for k in R_REF if k[0] == name and len(k) == 2 and k[1] not in ("structure", "sigma2")]
    assert set(res.terms) == set(terms)
    for t in terms:
        ref, got = R_REF[(name, t)], res.terms[t]
        assert pytest.approx(ref["F"], rel=TOL) == got.F
        assert got.df_num == ref["df_num"]
        assert got.df_den == pytest.approx(ref["df_den"], rel=TOL)
        assert got.p_raw == pytest.approx(ref["p"], rel=TOL)


@pytest.mark.parametrize("name", list(FACTORS))
def test_contrasts_match_emmeans_on_the_same_fit(fits: dict[str, Any], name: str) -> None:
    model = fits[name].model
    keys = [k for k in R_REF if k[0] == name and len(k) == 3]
    assert keys
    for _, tag, label in keys:
        ref = R_REF[(name, tag, label)]
        if tag == "A|B":
            pair, at = label.split("@")
            got_all = model_contrasts(model, "A", "holm", within={"B": at})
        else:
            pair = label
            got_all = model_contrasts(model, tag, "holm")
        (got,) = [c for c in got_all if f"{c.a} - {c.b}" == pair]
        assert got.estimate == pytest.approx(ref["estimate"], rel=TOL, abs=1e-10)
        assert got.se == pytest.approx(ref["se"], rel=TOL)
        assert got.df == pytest.approx(ref["df"], rel=TOL)
        assert got.p_adjusted == pytest.approx(ref["p_adj"], rel=TOL)
        assert (got.ci_low, got.ci_high) == pytest.approx((ref["lo"], ref["hi"]), rel=TOL, abs=1e-8)
