"""Analyse what is configured: leave out conditions whose levels the matrix no longer has.

A runs folder keeps every condition ever run into it; after a level is renamed or removed
from ``matrix.factors`` the old runs would otherwise still be analysed, ranked and tested
(a quoted ``"on"`` beside an old unquoted ``on`` made a 4-level factor
``(off, on, False, True)``). Given the configured levels (``--config``, or the config
recorded at run time), a condition is kept when each of its levels is one of its factor's
configured levels *with the same type* (``True`` is not ``"True"`` nor ``1``); the others
are returned with the reason, for ``anova.json``'s ``excluded_conditions``. Their runs'
costs (``attrs["run_costs"]``) are left out too: costs reported cover what is analysed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.frame_attrs import SharedList


def _plain(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def _member(value: Any, levels: Sequence[Any]) -> bool:
    v = _plain(value)
    return any(type(v) is type(c) and v == c for c in levels)


def restrict_to_configured(
    frame: pd.DataFrame, factor_levels: Mapping[str, Sequence[Any]] | None
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """(``frame`` without the unconfigured conditions, their descriptions
    ``{"condition_id", "levels", "reason"}``). Without configured levels, or when every
    condition is configured, ``frame`` is returned as is."""
    if not factor_levels or frame.empty or "condition_id" not in frame.columns:
        return frame, []
    factors = [f for f in factor_levels if f in frame.columns]
    heads = frame.drop_duplicates("condition_id")[["condition_id", *factors]]
    excluded: list[dict[str, Any]] = []
    for row in heads.to_dict("records"):
        bad = {f: _plain(row[f]) for f in factors if not _member(row[f], factor_levels[f])}
        if bad:
            what = "; ".join(f"{f}={v!r} is not a configured level of {f} "
                             f"({', '.join(repr(c) for c in factor_levels[f])})"
                             for f, v in bad.items())
            excluded.append({"condition_id": str(row["condition_id"]),
                             "levels": {f: _plain(row[f]) for f in factors},
                             "reason": f"not in the configured matrix: {what}"})
    if not excluded:
        return frame, []
    drop = {e["condition_id"] for e in excluded}
    keep = ~frame["condition_id"].astype(str).isin(drop).to_numpy()
    out = frame[keep].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    levels = dict(frame.attrs.get("levels") or {})
    for f in factors:
        present = [_plain(x) for x in out[f].drop_duplicates().tolist()]
        levels[f] = [c for c in factor_levels[f] if _member(c, present)]
    out.attrs["levels"] = levels
    # run-level costs (runs without per-sample costs) cover the analysed conditions only
    out.attrs["run_costs"] = SharedList(
        rc for rc in frame.attrs.get("run_costs") or [] if str(rc.get("condition_id")) not in drop)
    for col in out.columns:  # categorical factor columns: forget the dropped levels
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].cat.remove_unused_categories()
    return out, excluded
