"""Property tests: the order of factors and of levels never changes a term's F or p."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from eval_harness.analysis.stats import anova_balanced, pairwise_contrasts


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(3, 2), (2, 2, 2), (4, 3), (3, 2, 2)]),
    method=st.sampled_from(["rm", "lmm"]),
    data=st.data(),
)
def test_factor_and_level_permutations_leave_terms_unchanged(seed, shape, method, data) -> None:
    rng = np.random.default_rng(seed)
    k = len(shape)
    y = rng.normal(size=(7, *shape)) + rng.normal(size=(7,) + (1,) * k)
    names = ["A", "B", "C"][:k]
    levels = [[f"{n}{i}" for i in range(s)] for n, s in zip(names, shape, strict=True)]
    base = anova_balanced(y, names, levels, method=method)
    fac_perm = data.draw(st.permutations(range(k)))
    lvl_perms = [data.draw(st.permutations(range(s))) for s in shape]
    y2 = y
    for j, perm in enumerate(lvl_perms):
        y2 = np.take(y2, perm, axis=j + 1)
    y2 = np.transpose(y2, (0, *[j + 1 for j in fac_perm]))
    names2 = [names[j] for j in fac_perm]
    levels2 = [[levels[j][i] for i in lvl_perms[j]] for j in fac_perm]
    other = anova_balanced(y2, names2, levels2, method=method)
    for term, t in base.terms.items():
        renamed = ":".join(sorted(term.split(":"), key=names2.index))
        t2 = other.terms[renamed]
        assert np.isclose(t.F, t2.F, rtol=1e-9) and np.isclose(t.p_raw, t2.p_raw, rtol=1e-9)
        assert t.gg_epsilon is None or np.isclose(t.gg_epsilon, t2.gg_epsilon, rtol=1e-9)
    # contrasts of the first factor: same pairs (up to sign) whatever the order
    c1 = {(c.a, c.b): c for c in pairwise_contrasts(y, names, levels, "A", method=method)}
    for c in pairwise_contrasts(y2, names2, levels2, "A", method=method):
        ref = c1.get((c.a, c.b)) or c1[(c.b, c.a)]
        sign = 1 if (c.a, c.b) in c1 else -1
        assert np.isclose(c.estimate, sign * ref.estimate) and np.isclose(c.p_raw, ref.p_raw)
