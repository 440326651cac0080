"""The random-slopes mixed model (method `mixed`) against R on 6 unbalanced designs.

Data: data/u*.csv, written by r_reference/make_unbalanced.py (seeded; 10–30% of the case ×
cell means deleted; u2x2_noslope has a zero slope variance, u2x2_nocase zero case and slope
variances). Reference values: r_reference/random_slopes.R
(R 4.2.2, lme4 1.1.31, lmerTest 3.1.3, emmeans 1.8.4.1), which applies the structure rule
of stats/re_rule.py with lme4's own fits and prints the lines below verbatim. Global R
settings: options(contrasts = c("contr.sum", "contr.poly")); lmerControl(optimizer =
"nloptwrap", optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 0, ftol_rel =
0), check.nobs.vs.nRE = "ignore", ...). Calls: terms — anova(fit, type = 3, ddf =
"Satterthwaite"); contrasts — summary(emmeans(fit, pairwise ~ A, lmer.df =
"satterthwaite")$contrasts, infer = TRUE, adjust = "holm") with confint(..., adjust =
"none"); simple effects — the same with pairwise ~ A | B. The REML optimum agrees to
1e-8 relative; F, df, p and the contrasts to 2e-6 (measured worst 1.2e-6: lmerTest's
Hessian is numDeriv's Richardson differences, ours analytic).
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
TOL = 2e-6

R_REF: dict[tuple[str, ...], Any] = {
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_slopes", "structure"): dict(slopes=["A", "B", "A:B"], reml=273.690487499, cell_cov_eigen=[0.251941271908, 2.24200348114, 2.55718911003, 3.18792781382]),
    ("u2x2_slopes", "A"): dict(F=3.34051716194, df_num=            1, df_den=21.4095068053, p=0.0815649827793),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "B"): dict(F=0.033310703717, df_num=            1, df_den=20.3105482551, p=0.856990218008),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "A:B"): dict(F=12.9181446663, df_num=            1, df_den=15.1098170057, p=0.00263003875996),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_slopes", "A", "a1 - a2"): dict(estimate= 0.5857143392, se=0.320463818118, df=21.4095068053, p_adj=0.0815649827793, lo=-0.0799513292413, hi=1.25138000764),
    ("u2x2_slopes", "B", "b1 - b2"): dict(estimate=0.0628173327989, se=0.344181552045, df=20.3105482551, p_adj=0.856990218008, lo=-0.65442971856, hi=0.780064384157),
    ("u2x2_slopes", "A|B", "a1 - a2@b1"): dict(estimate=1.03116126577, se=0.336389111124, df=25.1570953958, p_adj=0.00513489638023, lo=0.338574223616, hi=1.72374830792),
    ("u2x2_slopes", "A|B", "a1 - a2@b2"): dict(estimate=0.140267412629, se=0.350651570614, df= 28.908211683, p_adj=0.692082893167, lo=-0.57699449709, hi=0.857529322349),
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_noslope", "structure"): dict(slopes=["A", "B", "A:B"], reml=147.368868036, cell_cov_eigen=[0.0764790253617, 0.285991957701, 0.65625054438, 2.80557150803]),
    ("u2x2_noslope", "A"): dict(F=191.580976983, df_num=            1, df_den=11.1214008004, p=2.33931566819e-08),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "B"): dict(F=0.24668836174, df_num=            1, df_den=17.8100858491, p=0.625491387615),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "A:B"): dict(F=6.36090800107, df_num=            1, df_den=16.6399354341, p=0.0221781022015),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_noslope", "A", "a1 - a2"): dict(estimate=1.13783344628, se=0.0822058082613, df=11.1214008004, p_adj=2.33931566819e-08, lo=0.957140360957, hi= 1.3185265316),
    ("u2x2_noslope", "B", "b1 - b2"): dict(estimate=0.0662222449217, se=0.133330518726, df=17.8100858491, p_adj=0.625491387615, lo=-0.214109038513, hi=0.346553528357),
    ("u2x2_noslope", "A|B", "a1 - a2@b1"): dict(estimate=1.63208572207, se=0.210929295016, df=22.1157403425, p_adj=9.86625970769e-08, lo=1.19477783172, hi=2.06939361242),
    ("u2x2_noslope", "A|B", "a1 - a2@b2"): dict(estimate=0.643581170489, se=0.214085817236, df=23.1976321124, p_adj=0.00626058592519, lo=0.200919598525, hi=1.08624274245),
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 + A2 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 + A2_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u3x2", "structure"): dict(slopes=["A", "B", "A:B"], reml=243.113262777, cell_cov_eigen=[0.0617658959123, 0.354412048735, 0.365237924746, 1.59663496753, 3.60510688674, 5.39955834765]),
    ("u3x2", "A"): dict(F=2.83504519582, df_num=            2, df_den=14.1381654089, p=0.0921956385297),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "B"): dict(F=0.113258816107, df_num=            1, df_den=14.9553613382, p=0.741139951429),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "A:B"): dict(F=2.35903591171, df_num=            2, df_den=11.3354137659, p=0.139132414196),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u3x2", "A", "a1 - a2"): dict(estimate=0.377333803245, se=0.21067850282, df=13.8453711864, p_adj=0.190331337973, lo=-0.075000548214, hi=0.829668154704),
    ("u3x2", "A", "a1 - a3"): dict(estimate=0.759018405105, se=0.31878564114, df= 15.361364992, p_adj=0.0918212961452, lo=0.0809324235611, hi=1.43710438665),
    ("u3x2", "A", "a2 - a3"): dict(estimate=0.38168460186, se=0.214964900335, df= 13.800755789, p_adj=0.190331337973, lo=-0.079994509804, hi=0.843363713525),
    ("u3x2", "B", "b1 - b2"): dict(estimate=0.131397684029, se=0.390437769031, df=14.9553613849, p_adj=0.741140020573, lo=-0.701017117146, hi=0.963812485205),
    ("u3x2", "A|B", "a1 - a2@b1"): dict(estimate=0.636421860198, se=0.257526108838, df= 22.482558836, p_adj=0.0429845571026, lo=0.103009248698, hi= 1.1698344717),
    ("u3x2", "A|B", "a1 - a3@b1"): dict(estimate=1.04635528641, se= 0.3470417957, df=20.6446078081, p_adj=0.0200279570682, lo=0.323885111589, hi=1.76882546124),
    ("u3x2", "A|B", "a2 - a3@b1"): dict(estimate=0.409933426217, se=0.231636243217, df=17.7974963879, p_adj=0.0939025235963, lo=-0.077113469963, hi=0.896980322397),
    ("u3x2", "A|B", "a1 - a2@b2"): dict(estimate=0.118245746292, se=0.260980364605, df=23.5856504752, p_adj=0.654629767257, lo=-0.420892450824, hi=0.657383943408),
    ("u3x2", "A|B", "a1 - a3@b2"): dict(estimate=0.471681523796, se=0.343921817798, df=19.9818875185, p_adj=0.410394749185, lo=-0.245768507529, hi=1.18913155512),
    ("u3x2", "A|B", "a2 - a3@b2"): dict(estimate=0.353435777504, se=0.225994689937, df=16.5133142983, p_adj=0.410394749185, lo=-0.124444065148, hi=0.831315620156),
    # lmer(value ~ A*B*C + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + C1 | case_id) + (0 + A1_B1 | case_id) + (0 + A1_C1 | case_id) + (0 + B1_C1 | case_id) + (0 + A1_B1_C1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2x2", "structure"): dict(slopes=["A", "B", "C", "A:B", "A:C", "B:C", "A:B:C"], reml=263.200867554, cell_cov_eigen=[0.132286208295, 0.29734333838, 0.309955302534, 0.474986344642, 0.937792561652, 1.96023443908, 2.62041274613, 7.56672450551]),
    ("u2x2x2", "A"): dict(F=3.58964211402, df_num=            1, df_den=13.1492651941, p=0.0803431679831),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "B"): dict(F=0.678017128349, df_num=            1, df_den=13.2077974001, p=0.424889237926),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "C"): dict(F=5.20697955484, df_num=            1, df_den=11.4848261784, p=0.042450500516),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:B"): dict(F=0.109583777594, df_num=            1, df_den=11.4713549677, p=0.746586818658),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:C"): dict(F=0.891354216151, df_num=            1, df_den=13.1231716068, p=0.362169092007),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "B:C"): dict(F= 1.3699547624, df_num=            1, df_den=9.06871062325, p=0.271657320691),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A:B:C"): dict(F=7.66793000764, df_num=            1, df_den=8.58132819386, p=0.0227678484901),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2x2", "A", "a1 - a2"): dict(estimate=0.601751107158, se=0.317607918903, df=13.1492651941, p_adj=0.0803431679831, lo=-0.0836081605972, hi=1.28711037491),
    ("u2x2x2", "B", "b1 - b2"): dict(estimate=0.230182846929, se=0.279545576553, df=13.2077974001, p_adj=0.424889237926, lo=-0.372774222987, hi=0.833139916845),
    ("u2x2x2", "C", "c1 - c2"): dict(estimate=-0.452007398078, se=0.198085463871, df=11.4848261784, p_adj=0.042450500516, lo=-0.88575554386, hi=-0.0182592522958),
    ("u2x2x2", "A|B", "a1 - a2@b1"): dict(estimate=0.63273404745, se=0.331082552588, df=15.1121326368, p_adj=0.0751479595187, lo=-0.0724959234889, hi=1.33796401839),
    ("u2x2x2", "A|B", "a1 - a2@b2"): dict(estimate=0.570768166867, se=0.33114002686, df=15.2579883164, p_adj=0.104969158234, lo=-0.134002088824, hi=1.27553842256),
    # lmer(value ~ A + (1 | case_id) + (0 + A1 + A2 + A3 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u4", "structure"): dict(slopes=["A"], reml= 62.119418598, cell_cov_eigen=[0.0457489237931, 0.195588001326, 0.264760914454, 1.67504914585]),
    ("u4", "A"): dict(F=0.934047718199, df_num=            3, df_den=7.50988021571, p=0.470345715766),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u4", "A", "a1 - a2"): dict(estimate=0.016392542186, se=0.145255298253, df=7.91313405809, p_adj=            1, lo=-0.319207887296, hi=0.351992971668),
    ("u4", "A", "a1 - a3"): dict(estimate=0.229369184875, se=0.196660687731, df=8.36918689464, p_adj=            1, lo=-0.220672502374, hi=0.679410872123),
    ("u4", "A", "a1 - a4"): dict(estimate=0.26702911873, se=0.246523442425, df=7.02413341369, p_adj=            1, lo=-0.315500425643, hi=0.849558663104),
    ("u4", "A", "a2 - a3"): dict(estimate=0.212976642689, se=0.196621547913, df=8.35187334386, p_adj=            1, lo=-0.237129808541, hi=0.663083093919),
    ("u4", "A", "a2 - a4"): dict(estimate=0.250636576544, se=0.171632496039, df=7.68826989225, p_adj=            1, lo=-0.147959444492, hi=0.649232597581),
    ("u4", "A", "a3 - a4"): dict(estimate=0.0376599338556, se=0.23295369077, df=8.20742631786, p_adj=            1, lo=-0.497178225025, hi=0.572498092736),
    # lmer(value ~ A*B + (1 | case_id) + (0 + A1 | case_id) + (0 + B1 | case_id) + (0 + A1_B1 | case_id), REML = TRUE)  [structure chosen by the rule]
    ("u2x2_nocase", "structure"): dict(slopes=["A", "B", "A:B"], reml= 118.64457823, cell_cov_eigen=[0.155369042839, 0.320065163506, 0.950490670434,  1.1885374099]),
    ("u2x2_nocase", "A"): dict(F=10.6587068855, df_num=            1, df_den=12.1215739408, p=0.0066864049609),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "B"): dict(F=0.0527448802502, df_num=            1, df_den=15.6558057203, p=0.821327615725),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "A:B"): dict(F=14.9820949146, df_num=            1, df_den=  6.212743756, p=0.00771970929546),  # anova(fit, type = 3, ddf = "Satterthwaite")
    ("u2x2_nocase", "A", "a1 - a2"): dict(estimate=0.828289183297, se=0.253705411213, df=12.1215739408, p_adj=0.0066864049609, lo=0.27612684488, hi=1.38045152171),
    ("u2x2_nocase", "B", "b1 - b2"): dict(estimate=0.0630894941112, se=0.274705205841, df=15.6558057203, p_adj=0.821327615725, lo=-0.520301796325, hi=0.646480784548),
    ("u2x2_nocase", "A|B", "a1 - a2@b1"): dict(estimate=1.38094276554, se=0.291256764629, df=13.8714586591, p_adj=0.000323488568166, lo=0.755715622659, hi=2.00616990842),
    ("u2x2_nocase", "A|B", "a1 - a2@b2"): dict(estimate=0.275635601054, se=0.290988833542, df=14.1994503488, p_adj=0.35936029033, lo=-0.347651940596, hi=0.898923142703),
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
