"""Drop judges that errored on every sample from the composite (``--allow-errored-judges``).

A judge that errored everywhere (a wrong key, an endpoint that is down) makes every
sample's recorded composite *errored* — so nothing is left to analyse although the other
judges scored every sample. With ``--allow-errored-judges`` the composite is formed again
without those judges, by the one rule (:func:`eval_harness.judges.composite.composite`)
over the remaining entering judges j:

    composite = errored                 if a remaining entering judge errored
              = 0                       if a remaining boolean gate judge is false
              = Σ_j w_j·x̃_j / Σ_j w_j  otherwise (the weights renormalised over j)

with weights, gates and the entering set from the config (``composite`` block applied),
else weight 1 and no gates. Samples whose run errored stay errored.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from eval_harness.judges.composite import JudgeSpec, JudgeValue, composite

KEYS = ["condition_id", "run_id", "replication", "case_id"]


def drop_from_composite(frame: pd.DataFrame, dropped: Collection[str],
                        specs: Mapping[str, JudgeSpec] | None) -> pd.DataFrame:
    """``frame`` with its composite rows recomputed without the ``dropped`` judges (their
    own rows stay, errored, for the per-judge views)."""
    if not dropped or frame.empty:
        return frame
    judge = frame["judge"].astype(str)
    is_comp = (judge == "composite").to_numpy()
    entering = ~is_comp & (frame["kind"].astype(str) != "pairwise").to_numpy() \
        & ~judge.isin(set(dropped)).to_numpy()
    if specs:
        entering &= judge.map(lambda j: specs[j].in_composite if j in specs else False
                              ).to_numpy(dtype=bool)
    part = frame.loc[entering, KEYS]
    names = judge[entering]
    weight = names.map(lambda j: specs[j].weight if specs and j in specs else 1.0)
    gate = names.map(lambda j: bool(specs[j].gate) if specs and j in specs else False)
    norm = pd.to_numeric(frame.loc[entering, "normalized"], errors="coerce")
    err = frame.loc[entering, "errored"].fillna(False).astype(bool)
    # one list of judge values per sample (groups numbered in first-seen order, the order
    # of drop_duplicates), each formed by the one rule
    sample = part.groupby(KEYS, observed=True, sort=False).ngroup().to_numpy()
    parts: list[list[JudgeValue]] = [[] for _ in range(int(sample.max()) + 1 if len(sample) else 0)]
    for i, n, e, g, w in zip(sample.tolist(), norm.to_numpy(dtype=float).tolist(),
                             err.to_numpy(dtype=bool).tolist(), gate.to_numpy(dtype=bool).tolist(),
                             weight.to_numpy(dtype=float).tolist(), strict=True):
        parts[i].append(JudgeValue(n, e, g, w))
    formed = [composite(p) for p in parts]
    agg = part.drop_duplicates().reset_index(drop=True)
    agg["_value"] = np.array([v for v, _ in formed], dtype=float)
    agg["_c_err"] = np.array([e for _, e in formed], dtype=bool)
    comp = frame.loc[is_comp, KEYS].merge(agg[[*KEYS, "_value", "_c_err"]], on=KEYS,
                                          how="left", sort=False)
    out = frame.copy()
    case_err = (out.loc[is_comp, "case_status"].astype(str) == "errored").to_numpy() \
        if "case_status" in out.columns else np.zeros(int(is_comp.sum()), dtype=bool)
    new_val = np.where(case_err, np.nan, comp["_value"].to_numpy(dtype=float))
    new_err = case_err | comp["_c_err"].fillna(False).to_numpy(dtype=bool)
    out.loc[is_comp, "value"] = new_val
    out.loc[is_comp, "normalized"] = new_val
    out.loc[is_comp, "errored"] = new_err
    out.attrs = dict(frame.attrs)
    return out
