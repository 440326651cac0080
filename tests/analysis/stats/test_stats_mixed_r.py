"""The random-slopes mixed model (method `mixed`) against R on 6 unbalanced designs.

Data: data/u*.csv, written by r_reference/make_unbalanced.py (seeded; 10–30% of the case ×
cell means deleted; u2x2_noslope has a zero slope variance, u2x2_nocase zero case and slope
variances). Reference values: r_reference/random_slopes.R
(R 4.2.2, lme4 1.1.31, lmerTest 3.1.3, emmeans 1.8.4.1, numDeriv 2016.8-1.1), which applies the structure rule
of stats/re_rule.py with lme4's own fits and prints the lines below verbatim. Global R
settings: options(contrasts = c("contr.sum", "contr.poly")); lmerControl(optimizer =
"nloptwrap", optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0, ftol_rel =
0), check.nobs.vs.nRE = "ignore", ...). Calls: terms — anova(fit, type = 3, ddf =
"Satterthwaite"); contrasts — summary(emmeans(fit, pairwise ~ A, lmer.df =
"satterthwaite")$contrasts, infer = TRUE, adjust = "holm") with confint(..., adjust =
"none"); simple effects — the same with pairwise ~ A | B. lmerTest's Satterthwaite
ingredients (the Hessian of its devfun_vp and the Jacobian of get_covbeta, numDeriv's
Richardson differences) are recomputed by the same numDeriv calls with d = 0.02, r = 5
instead of the defaults d = 0.1, r = 4, whose truncation error (≈ 1e-6 in df) was the
largest difference from our analytic derivatives. The REML optimum agrees to 1e-8
relative; F, df, p and the contrasts to 1e-6 (measured worst 7.3e-7; 1.15e-6 with
numDeriv's defaults).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from eval_harness.analysis.stats import anova_frame
from eval_harness.analysis.stats.re_rule import cell_covariance
from eval_harness.analysis.stats.slopes import design_rows, model_contrasts

DATA = Path(__file__).parent / "data"
FACTORS = {"u2x2_slopes": ["A", "B"], "u2x2_noslope": ["A", "B"], "u3x2": ["A", "B"],
           "u2x2x2": ["A", "B", "C"], "u4": ["A"], "u2x2_nocase": ["A", "B"]}
TOL = 1e-6

R_REF: dict[tuple[str, ...], Any] = {
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_slopes", "structure"): dict(slopes=["A", "B", "A:B"], reml=273.690487499, cell_cov_eigen=[0.251941271908, 2.24200348114, 2.55718911003, 3.18792781382]),
    ("u2x2_slopes", "A"): dict(F=3.34051716194, df_num=            1, df_den=21.4095068097, p=0.0815649827764),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "B"): dict(F=0.033310703717, df_num=            1, df_den=20.3105481338, p=0.856990218019),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "A:B"): dict(F=12.9181446663, df_num=            1, df_den=15.1098176013, p=0.00263003861427),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "A", "a1 - a2"): dict(estimate= 0.5857143392, se=0.320463818118, df=21.4095068097, p_adj=0.0815649827764, lo=-0.0799513292331, hi=1.25138000763),
    ("u2x2_slopes", "B", "b1 - b2"): dict(estimate=0.0628173327989, se=0.344181552045, df=20.3105481338, p_adj=0.856990218019, lo=-0.65442971883, hi=0.780064384428),
    ("u2x2_slopes", "A|B", "a1 - a2@b1"): dict(estimate=1.03116126577, se=0.336389111124, df= 25.157095413, p_adj=0.00513489637777, lo=0.33857422364, hi= 1.7237483079),
    ("u2x2_slopes", "A|B", "a1 - a2@b2"): dict(estimate=0.140267412629, se=0.350651570614, df= 28.908211738, p_adj=0.692082893161, lo=-0.57699449703, hi=0.857529322289),
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_noslope", "structure"): dict(slopes=["A", "B", "A:B"], reml=147.368868036, cell_cov_eigen=[0.0764790253617, 0.285991957701, 0.65625054438, 2.80557150803]),
    ("u2x2_noslope", "A"): dict(F=191.580976983, df_num=            1, df_den= 11.121401964, p=2.33931289328e-08),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "B"): dict(F=0.24668836174, df_num=            1, df_den=17.8100858849, p=0.625491387603),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "A:B"): dict(F=6.36090800107, df_num=            1, df_den=16.6399355436, p=0.022178102125),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "A", "a1 - a2"): dict(estimate=1.13783344628, se=0.0822058082613, df= 11.121401964, p_adj=2.33931289328e-08, lo=0.957140363236, hi=1.31852652932),
    ("u2x2_noslope", "B", "b1 - b2"): dict(estimate=0.0662222449217, se=0.133330518726, df=17.8100858849, p_adj=0.625491387603, lo=-0.214109038472, hi=0.346553528316),
    ("u2x2_noslope", "A|B", "a1 - a2@b1"): dict(estimate=1.63208572207, se=0.210929295016, df=22.1157403715, p_adj=9.86625962006e-08, lo=1.19477783175, hi=2.06939361239),
    ("u2x2_noslope", "A|B", "a1 - a2@b2"): dict(estimate=0.643581170489, se=0.214085817236, df=23.1976321399, p_adj=0.00626058592001, lo=0.200919598554, hi=1.08624274242),
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 + A2 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 + A2_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u3x2", "structure"): dict(slopes=["A", "B", "A:B"], reml=243.113262777, cell_cov_eigen=[0.0617658959123, 0.354412048735, 0.365237924746, 1.59663496753, 3.60510688674, 5.39955834765]),
    ("u3x2", "A"): dict(F=2.83504519582, df_num=            2, df_den=14.1381655392, p=0.0921956382236),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "B"): dict(F=0.113258816107, df_num=            1, df_den= 14.955361237, p=0.74113995146),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "A:B"): dict(F=2.35903591171, df_num=            2, df_den=11.3354139978, p=0.139132413323),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "A", "a1 - a2"): dict(estimate=0.377333803245, se=0.21067850282, df=13.8453724746, p_adj=0.190331333907, lo=-0.0750005442179, hi=0.829668150708),
    ("u3x2", "A", "a1 - a3"): dict(estimate=0.759018405105, se=0.31878564114, df=15.3613649222, p_adj=0.0918212963415, lo=0.0809324232992, hi=1.43710438691),
    ("u3x2", "A", "a2 - a3"): dict(estimate=0.38168460186, se=0.214964900335, df= 13.800756041, p_adj=0.190331333907, lo=-0.0799945090008, hi=0.843363712722),
    ("u3x2", "B", "b1 - b2"): dict(estimate=0.131397684029, se=0.390437769031, df=14.9553612837, p_adj=0.741140020605, lo=-0.701017117638, hi=0.963812485697),
    ("u3x2", "A|B", "a1 - a2@b1"): dict(estimate=0.636421860198, se=0.257526108838, df=22.4825609364, p_adj=0.0429845554881, lo=0.103009251522, hi=1.16983446887),
    ("u3x2", "A|B", "a1 - a3@b1"): dict(estimate=1.04635528641, se= 0.3470417957, df=20.6446077069, p_adj=0.0200279571424, lo=0.323885111369, hi=1.76882546146),
    ("u3x2", "A|B", "a2 - a3@b1"): dict(estimate=0.409933426217, se=0.231636243217, df=17.7974969389, p_adj=0.0939025230666, lo=-0.0771134688689, hi=0.896980321303),
    ("u3x2", "A|B", "a1 - a2@b2"): dict(estimate=0.118245746292, se=0.260980364605, df=23.5856526033, p_adj=0.654629766886, lo=-0.420892448202, hi=0.657383940786),
    ("u3x2", "A|B", "a1 - a3@b2"): dict(estimate=0.471681523796, se=0.343921817798, df=19.9818874168, p_adj=0.410394747805, lo=-0.245768507763, hi=1.18913155536),
    ("u3x2", "A|B", "a2 - a3@b2"): dict(estimate=0.353435777504, se=0.225994689937, df=16.5133147036, p_adj=0.410394747805, lo=-0.124444064226, hi=0.831315619234),
    # lmer(value ~ A*B*C + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + C1 | case_id) + (0 + A1_B1 | case_id) + (0 + A1_C1 | case_id) + (0 + B1_C1 | case_id) + (0 + A1_B1_C1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2x2", "structure"): dict(slopes=["A", "B", "C", "A:B", "A:C", "B:C", "A:B:C"], reml=263.200867554, cell_cov_eigen=[0.132286208295, 0.29734333838, 0.309955302534, 0.474986344642, 0.937792561652, 1.96023443908, 2.62041274613, 7.56672450551]),
    ("u2x2x2", "A"): dict(F=3.58964211402, df_num=            1, df_den=13.1492652425, p=0.0803431679007),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "B"): dict(F=0.678017128349, df_num=            1, df_den=13.2077974452, p=0.424889237877),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "C"): dict(F=5.20697955484, df_num=            1, df_den=11.4848262094, p=0.0424505004583),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:B"): dict(F=0.109583777594, df_num=            1, df_den=11.4713543179, p=0.746586818991),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:C"): dict(F=0.891354216151, df_num=            1, df_den=13.1231716704, p=0.362169091926),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "B:C"): dict(F= 1.3699547624, df_num=            1, df_den= 9.0687107635, p=0.271657320244),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:B:C"): dict(F=7.66793000764, df_num=            1, df_den=8.58132828722, p=0.0227678482587),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A", "a1 - a2"): dict(estimate=0.601751107158, se=0.317607918903, df=13.1492652425, p_adj=0.0803431679007, lo=-0.0836081603438, hi=1.28711037466),
    ("u2x2x2", "B", "b1 - b2"): dict(estimate=0.230182846929, se=0.279545576553, df=13.2077974452, p_adj=0.424889237877, lo=-0.372774222781, hi=0.83313991664),
    ("u2x2x2", "C", "c1 - c2"): dict(estimate=-0.452007398078, se=0.198085463871, df=11.4848262094, p_adj=0.0424505004583, lo=-0.885755543723, hi=-0.0182592524323),
    ("u2x2x2", "A|B", "a1 - a2@b1"): dict(estimate=0.63273404745, se=0.331082552588, df=15.1121326996, p_adj=0.0751479594384, lo=-0.0724959232356, hi=1.33796401813),
    ("u2x2x2", "A|B", "a1 - a2@b2"): dict(estimate=0.570768166867, se=0.33114002686, df=15.2579883797, p_adj=0.104969158151, lo=-0.134002088574, hi=1.27553842231),
    # lmer(value ~ A + (1 | case_id) + (0 + A1 + A2 + A3 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u4", "structure"): dict(slopes=["A"], reml= 62.119418598, cell_cov_eigen=[0.0457489237931, 0.195588001326, 0.264760914454, 1.67504914585]),
    ("u4", "A"): dict(F=0.934047718199, df_num=            3, df_den=7.50988044325, p=0.470345714536),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u4", "A", "a1 - a2"): dict(estimate=0.016392542186, se=0.145255298253, df=7.91313478233, p_adj=            1, lo=-0.319207881883, hi=0.351992966255),
    ("u4", "A", "a1 - a3"): dict(estimate=0.229369184875, se=0.196660687731, df=8.36918820882, p_adj=            1, lo=-0.220672490685, hi=0.679410860434),
    ("u4", "A", "a1 - a4"): dict(estimate=0.26702911873, se=0.246523442425, df= 7.0241335037, p_adj=            1, lo=-0.315500424136, hi=0.849558661597),
    ("u4", "A", "a2 - a3"): dict(estimate=0.212976642689, se=0.196621547913, df=8.35187349563, p_adj=            1, lo=-0.237129807185, hi=0.663083092563),
    ("u4", "A", "a2 - a4"): dict(estimate=0.250636576544, se=0.171632496039, df=7.68826985655, p_adj=            1, lo=-0.147959444829, hi=0.649232597918),
    ("u4", "A", "a3 - a4"): dict(estimate=0.0376599338556, se=0.23295369077, df=8.20742669952, p_adj=            1, lo=-0.497178220819, hi=0.57249808853),
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_nocase", "structure"): dict(slopes=["A", "B", "A:B"], reml= 118.64457823, cell_cov_eigen=[0.155369042839, 0.320065163506, 0.950490670434,  1.1885374099]),
    ("u2x2_nocase", "A"): dict(F=10.6587068855, df_num=            1, df_den=12.1215741327, p=0.00668640483291),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "B"): dict(F=0.0527448802502, df_num=            1, df_den=15.6558057594, p=0.821327615718),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "A:B"): dict(F=14.9820949146, df_num=            1, df_den=6.21274509434, p=0.00771970606994),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "A", "a1 - a2"): dict(estimate=0.828289183297, se=0.253705411213, df=12.1215741327, p_adj=0.00668640483291, lo=0.276126845839, hi=1.38045152076),
    ("u2x2_nocase", "B", "b1 - b2"): dict(estimate=0.0630894941112, se=0.274705205841, df=15.6558057594, p_adj=0.821327615718, lo=-0.520301796204, hi=0.646480784427),
    ("u2x2_nocase", "A|B", "a1 - a2@b1"): dict(estimate=1.38094276554, se=0.291256764629, df=13.8714596754, p_adj=0.00032348850446, lo=0.755715626999, hi=2.00616990408),
    ("u2x2_nocase", "A|B", "a1 - a2@b2"): dict(estimate=0.275635601054, se=0.290988833542, df=14.1994513262, p_adj=0.359360289259, lo=-0.347651936632, hi=0.898923138739),
}


@pytest.fixture(scope="module")
def fits() -> dict[str, Any]:
    out = {}
    for name, factors in FACTORS.items():
        d = pd.read_csv(DATA / f"{name}.csv")
        levels = {f: sorted(d[f].unique()) for f in factors}
        res, dropped = anova_frame(d, factors, method="mixed", levels=levels,
                                    ddf="satterthwaite")
        assert dropped == [] and res.method == "mixed"
        out[name] = res
    return out


@pytest.mark.parametrize("name", list(FACTORS))
def test_structure_and_optimum_match_r(fits: dict[str, Any], name: str) -> None:
    # the residual is on a likelihood ridge (re_rule step 1): compare what is identified,
    # the REML criterion and the fitted cell covariance (its eigenvalues)
    ref = R_REF[(name, "structure")]
    model = fits[name].model
    assert sorted(":".join(FACTORS[name][j] for j in s) for s in model.slopes) == sorted(ref["slopes"])
    assert not model.fit.structure.correlated or not model.slopes
    assert model.fit.deviance == pytest.approx(ref["reml"], rel=1e-8)
    levels = [tuple(sorted(pd.read_csv(DATA / f"{name}.csv")[f].unique())) for f in FACTORS[name]]
    cov = cell_covariance(model.fit, design_rows(FACTORS[name], levels))
    assert np.sort(np.linalg.eigvalsh(cov)) == pytest.approx(ref["cell_cov_eigen"], rel=TOL)


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


# `--method lmm --keep-incomplete`: r_reference/random_intercept.R, lmer(value ~ A*B +
# (1 | case_id), REML = TRUE) with the same control; anova(fit, type = 3, ddf =
# "Satterthwaite") — for the one-factor design (u4) lmerTest tests the type-1 contrasts.
LMM_REF: dict[tuple[str, ...], Any] = {
    ("u2x2_slopes", "A"): dict(F=4.63907545178, df_num=            1, df_den=58.5847382086, p=0.0353775708006),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_slopes", "B"): dict(F=0.121263111336, df_num=            1, df_den=59.6130780579, p=0.72889531431),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_slopes", "A:B"): dict(F=2.22902268349, df_num=            1, df_den=58.3722383046, p=0.140825223961),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_noslope", "A"): dict(F=51.3351194146, df_num=            1, df_den=42.6665174802, p=7.75576536215e-09),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_noslope", "B"): dict(F=0.891699405826, df_num=            1, df_den=42.0998661172, p=0.350405291002),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_noslope", "A:B"): dict(F=9.93534356693, df_num=            1, df_den=42.7518166392, p=0.00296094484345),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u3x2", "A"): dict(F=3.47239922081, df_num=            2, df_den=66.4762608616, p=0.036782363692),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u3x2", "B"): dict(F=0.331399837888, df_num=            1, df_den=65.8197093062, p=0.56679904074),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u3x2", "A:B"): dict(F=0.551314453504, df_num=            2, df_den=65.7475338538, p=0.578832261257),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2x2", "A"): dict(F=9.47665068658, df_num=            1, df_den= 69.600107517, p=0.00297662993589),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u2x2x2", "B"): dict(F= 1.8299240663, df_num=            1, df_den= 69.706891155, p=0.180508168355),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u2x2x2", "C"): dict(F=3.17223598191, df_num=            1, df_den=69.9621526263, p=0.0792405421918),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u2x2x2", "A:B"): dict(F=0.00129004743349, df_num=            1, df_den=70.6341722276, p=0.971449669735),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u2x2x2", "A:C"): dict(F=0.285573640134, df_num=            1, df_den=69.7045871297, p=0.594771528142),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u2x2x2", "B:C"): dict(F=0.538670736195, df_num=            1, df_den=70.5369036662, p=0.465416795637),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u2x2x2", "A:B:C"): dict(F=5.24141341049, df_num=            1, df_den=69.7496479371, p=0.0250859943344),  # anova(lmer(value ~ A*B*C + (1 | case_id)), type = 3)
    ("u4", "A"): dict(F=1.10428373766, df_num=            3, df_den=23.0961044065, p=0.36748066564),  # anova(lmer(value ~ A + (1 | case_id)), type = 3)
    ("u2x2_nocase", "A"): dict(F=16.6172507243, df_num=            1, df_den=45.9999999995, p=0.000179250787608),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_nocase", "B"): dict(F=0.64469796347, df_num=            1, df_den=45.9999999995, p= 0.4261440257),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
    ("u2x2_nocase", "A:B"): dict(F=8.50394913308, df_num=            1, df_den=45.9999999995, p=0.00546151400832),  # anova(lmer(value ~ A*B + (1 | case_id)), type = 3)
}


@pytest.mark.parametrize("name", list(FACTORS))
def test_lmm_keep_incomplete_matches_lmertest(name: str) -> None:
    d = pd.read_csv(DATA / f"{name}.csv")
    levels = {f: sorted(d[f].unique()) for f in FACTORS[name]}
    res, dropped = anova_frame(d, FACTORS[name], method="lmm", keep_incomplete=True,
                               levels=levels)
    terms = [k[1] for k in LMM_REF if k[0] == name]
    assert dropped == [] and set(res.terms) == set(terms)
    for t in terms:
        ref, got = LMM_REF[(name, t)], res.terms[t]
        assert pytest.approx(ref["F"], rel=TOL) == got.F
        assert got.df_den == pytest.approx(ref["df_den"], rel=TOL)
        assert got.p_raw == pytest.approx(ref["p"], rel=TOL)
