"""Pieces of `anova.json`: term tables, contrasts, simple effects, the per-judge block.

Serialisation only: the statistics come from `eval_harness.analysis.stats`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from eval_harness._util.numbers import finite_or_none
from eval_harness.analysis.anova.design_check import usable_rows
from eval_harness.analysis.stats import (
    AnovaResult,
    Contrast,
    adjust_pvalues,
    pairwise_contrasts,
    per_judge_screen,
)
from eval_harness.analysis.stats.design import term_name, term_subsets
from eval_harness.analysis.stats.slopes import model_contrasts
from eval_harness.errors import UsageError


def term_order(factors: Sequence[str]) -> dict[str, int]:
    """Canonical order of every term of the full factorial (main effects first)."""
    return {term_name(factors, s): i for i, s in enumerate(term_subsets(len(factors)))}


def dropped_terms(factors: Sequence[str], kept: Sequence[str]) -> list[dict[str, str]]:
    """Excluded-term entries for every term involving a dropped (single-level) factor."""
    out = []
    for s in term_subsets(len(factors)):
        gone = [factors[j] for j in s if factors[j] not in kept]
        if gone:
            out.append({"term": term_name(factors, s),
                        "reason": f"single level: {', '.join(gone)} has fewer than 2 observed levels"})
    return out


def term_table(
    res: AnovaResult, correction: str, alpha: float
) -> tuple[dict[str, dict[str, Any]], int]:
    """Terms with raw and adjusted p and `significant` (on the adjusted p); family size."""
    names = list(res.terms)
    raw = np.array([res.terms[t].p_raw for t in names], dtype=float)
    adj = adjust_pvalues(raw, correction) if names else np.array([])
    out = {}
    for t, p_adj in zip(names, adj, strict=True):
        r = res.terms[t]
        out[t] = {
            "F": finite_or_none(r.F),
            "df_num": finite_or_none(r.df_num),
            "df_den": finite_or_none(r.df_den),
            "gg_epsilon": finite_or_none(r.gg_epsilon),
            "p_uncorrected": finite_or_none(r.p_uncorrected),
            "p_raw": finite_or_none(r.p_raw),
            "p_adjusted": finite_or_none(p_adj),
            "significant": bool(math.isfinite(p_adj) and p_adj < alpha),
            "partial_eta_sq": finite_or_none(r.partial_eta_sq),
            "ss": finite_or_none(r.ss),
            "ss_error": finite_or_none(r.ss_error),
            "ms": finite_or_none(r.ms),
            "ms_error": finite_or_none(r.ms_error),
        }
    return out, int(np.isfinite(raw).sum())


def _pairs(contrasts: Sequence[Contrast]) -> list[dict[str, Any]]:
    return [
        {
            "a": c.a.item() if isinstance(c.a, np.generic) else c.a,
            "b": c.b.item() if isinstance(c.b, np.generic) else c.b,
            "estimate": finite_or_none(c.estimate),
            "se": finite_or_none(c.se),
            "df": finite_or_none(c.df),
            "ci": [finite_or_none(c.ci_low), finite_or_none(c.ci_high)],
            "t": finite_or_none(c.t),
            "p_raw": finite_or_none(c.p_raw),
            "p_adjusted": finite_or_none(c.p_adjusted),
            "significant": bool(c.significant),
        }
        for c in contrasts
    ]


def _family(pairs: list[dict[str, Any]], correction: str) -> dict[str, Any]:
    return {"correction": correction,
            "family_size": sum(p["p_raw"] is not None for p in pairs), "pairs": pairs}


def contrasts_block(
    y: np.ndarray, kept: Sequence[str], levels: Mapping[str, Sequence[Any]], method: str,
    correction: str, alpha: float, terms: Mapping[str, Mapping[str, Any]], model: Any = None,
) -> dict[str, dict[str, Any]]:
    """Pairwise contrasts of marginal means per kept factor (family = that factor's pairs).

    With a fitted `model` (`stats.slopes.SlopesModel`) they come from that fit (emmeans on
    the lmer fit), every case included; otherwise from the complete cases `y`."""
    out: dict[str, dict[str, Any]] = {}
    lv = [list(levels[f]) for f in kept]
    for f in kept:
        if model is not None:
            out[f] = _family(_pairs(model_contrasts(model, f, correction, alpha)), correction)
            out[f]["source"] = "fitted model"
            continue
        if method == "mixed":  # the model could not be fitted (its terms say why)
            out[f] = {**_family([], correction), "note": "no fitted model: no contrasts (see excluded_terms)"}
            continue
        if y.shape[0] < 2:
            out[f] = {**_family([], correction), "note": "fewer than 2 complete cases: no contrasts"}
            continue
        block = _family(_pairs(pairwise_contrasts(y, kept, lv, f, method, correction, alpha)), correction)
        inter = [t for t, r in terms.items() if ":" in t and f in t.split(":") and r["significant"]]
        if inter:
            block["note"] = (
                f"{f} is in significant interaction(s) {', '.join(inter)}: these marginal means "
                "average over the other factors and can hide opposite effects; see simple_effects"
            )
        out[f] = block
    return out


def parse_simple_effects(
    spec: Any, kept: Sequence[str], terms: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """Pairs (factor, by): contrasts of `factor` within each level of `by`.

    `spec` is one item or a list of them (the CLI flag is repeatable), or {factor: by}:
    `"a:b"` / `("a", "b")` — a within each level of b; `"b"` alone — every other tested
    factor within each level of b; `"auto"` — both directions of every significant two-way
    interaction (nothing when none is significant)."""
    if spec is None or spec is False:
        return []
    items: list[Any] = list(spec.items()) if isinstance(spec, Mapping) else (
        [spec] if isinstance(spec, (str, tuple)) else list(spec))
    out: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, str) and item.strip().lower() == "auto":
            for t, r in terms.items():
                parts = t.split(":")
                if len(parts) == 2 and r["significant"]:
                    out += [(parts[0], parts[1]), (parts[1], parts[0])]
            continue
        if isinstance(item, str) and not any(sep in item for sep in ":|"):
            by = item.strip()
            if by not in kept or len(kept) < 2:
                raise UsageError(f"simple effects {item!r}: not one of the tested factors {list(kept)}",
                                 hint="write model:effort (model contrasts within each effort level)")
            out += [(f, by) for f in kept if f != by]
            continue
        a, b = [*item.replace("|", ":").split(":", 1), ""][:2] if isinstance(item, str) else item
        a, b = str(a).strip(), str(b).strip()
        if a not in kept or b not in kept or a == b:
            raise UsageError(f"simple effects {item!r}: need two different tested factors of {list(kept)}",
                             hint="write model:effort (model contrasts within each effort level)")
        out.append((a, b))
    return list(dict.fromkeys(out))


def simple_effects_block(
    y: np.ndarray, kept: Sequence[str], levels: Mapping[str, Sequence[Any]], method: str,
    correction: str, alpha: float, pairs: Sequence[tuple[str, str]], model: Any = None,
) -> list[dict[str, Any]]:
    """Contrasts of `factor` at each level of `by` (one family per (factor, by, level));
    from the fitted `model` when there is one (emmeans `pairwise ~ A | B`)."""
    out = []
    lv = [list(levels[f]) for f in kept]
    for factor, by in pairs:
        if model is None and method == "mixed":
            continue  # no fitted model (the terms are excluded with the reason)
        for at in levels[by]:
            res = (model_contrasts(model, factor, correction, alpha, within={by: at})
                   if model is not None else
                   pairwise_contrasts(y, kept, lv, factor, method, correction, alpha, within={by: at}))
            out.append({"factor": factor, "by": by, "at": at.item() if isinstance(at, np.generic) else at,
                        **_family(_pairs(res), correction)})
    return out


def per_judge_block(
    frame: pd.DataFrame, judges: Sequence[str], kept: Sequence[str],
    levels: Mapping[str, Sequence[Any]], method: str, alpha: float, keep_incomplete: bool,
    ddf: str = "kenward-roger",
) -> dict[str, Any]:
    """Per-judge ANOVAs; all (judge, term) raw p in one BH family; degenerate judges excluded."""
    excluded: list[dict[str, str]] = []
    frames: dict[str, pd.DataFrame] = {}
    for j in judges:
        rows = usable_rows(frame, j, ["case_id", *kept, "value"])
        if not kept:
            excluded.append({"judge": j, "reason": "no factor with 2 observed levels"})
        elif rows.empty:
            excluded.append({"judge": j, "reason": "no usable samples (all errored or missing)"})
        else:
            frames[j] = rows[["case_id", *kept, "value"]]
    block: dict[str, Any] = {"correction": "bh", "alpha": alpha, "family_size": 0, "judges": {}}
    if frames:
        screen = per_judge_screen(frames, kept, method=method, keep_incomplete=keep_incomplete,
                                  alpha=alpha, levels=levels, ddf=ddf)
        block["family_size"] = screen.family_size
        for j, res in screen.results.items():
            terms, _ = term_table(res, "none", alpha)
            for t in terms:
                terms[t]["p_adjusted"] = finite_or_none(screen.p_adjusted[j][t])
                terms[t]["significant"] = bool(screen.significant[j][t])
            block["judges"][j] = {
                "terms": terms,
                "excluded_terms": [{"term": e.term, "reason": e.reason} for e in res.excluded_terms],
                "n_cases": res.n_cases,
                "method": res.method,  # under auto each judge's own choice (rm | mixed)
                "excluded_cases": len(screen.excluded_cases.get(j, [])),
            }
        excluded += [{"judge": e.judge, "reason": e.reason} for e in screen.excluded]
    block["excluded"] = excluded
    return block
