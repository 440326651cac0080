"""aeh_fields: per_case and condition summaries computed by blocks match a per-row reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from eval_harness.aeh.export import aeh_fields


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    rows = []
    for model in ("m2", "m1"):
        for effort in ("lo", "hi"):
            for case in ("c10", "c2", "c1"):
                for rep in (1, 2):
                    rows.append({"model": model, "effort": effort, "case_id": case,
                                 "replication": rep, "run_id": f"{model}-{effort}-{rep}",
                                 "judge": "composite", "value": float(rng.uniform()),
                                 "errored": False})
    frame = pd.DataFrame(rows)
    frame.loc[3, "errored"] = True  # an errored composite row is left out
    frame.attrs["factors"] = ["model", "effort"]
    return frame


def _reference(frame: pd.DataFrame, factors: list[str]) -> dict[str, dict[str, Any]]:
    comp = frame[(frame["judge"] == "composite") & ~frame["errored"]]
    out: dict[str, dict[str, Any]] = {}
    for idx, value in comp.groupby([*sorted(factors), "case_id"])["value"].mean().items():
        levels = idx[:-1]
        key = (str(levels[0]) if len(factors) == 1 else
               ", ".join(f"{f}={v}" for f, v in zip(sorted(factors), levels, strict=True)))
        out.setdefault(key, {})[str(idx[-1])] = float(value)
    return out


def test_per_case_keys_order_and_values() -> None:
    frame = _frame()
    summaries = [{"condition_id": f"{m}{e}", "levels": {"model": m, "effort": e}}
                 for m in ("m2", "m1") for e in ("lo", "hi")]
    doc = aeh_fields({"condition_summaries": summaries}, frame)
    expected = _reference(frame, ["model", "effort"])
    assert list(doc["per_case"]) == list(expected) == [
        "effort=hi, model=m1", "effort=hi, model=m2", "effort=lo, model=m1",
        "effort=lo, model=m2"]
    for key, cases in expected.items():
        assert list(doc["per_case"][key]) == list(cases) == ["c1", "c10", "c2"]
        assert doc["per_case"][key] == cases
    s = doc["condition_summaries"][0]  # m2 / lo: 6 rows, one of them errored
    assert (s["model"], s["effort"], s["n_rows"]) == ("m2", "lo", 5)
    ok = frame[(frame["model"] == "m2") & (frame["effort"] == "lo") & ~frame["errored"]]
    assert s["std"] == float(np.std(ok["value"].to_numpy(), ddof=1))
    assert s["min"] == ok["value"].min() and s["max"] == ok["value"].max()


def test_one_factor_keys_are_the_levels() -> None:
    frame = _frame()
    frame = frame[frame["effort"] == "lo"].drop(columns="effort")
    frame.attrs["factors"] = ["model"]
    doc = aeh_fields({"condition_summaries": []}, frame)
    assert doc["per_case"] == _reference(frame, ["model"])
    assert list(doc["per_case"]) == ["m1", "m2"]
