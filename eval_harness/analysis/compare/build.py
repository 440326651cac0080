"""Assemble ``comparisons.json``: every condition against a reference, and/or against a baseline.

- Reference mode (the frame has ≥ 2 conditions): each other condition is compared with the
  reference condition — the one picked by ``reference`` ({factor: level} or
  {"condition_id": id}, from ``--reference model=m1,effort=low``), default the first
  condition in matrix order (first level of every factor, factors in writing order).
- Baseline mode (``baseline_frame`` given): each condition of the new runs is compared with
  the same condition_id in the baseline; when both sides hold exactly one condition they are
  paired even if the ids differ (the matrix levels were renamed), and that is noted.

The cluster key for the CR1 standard error is ``cluster_key`` if given, else the case tag
``"cluster"`` when the cases carry one (``df.attrs["case_tags"]``).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.compare.compare import compare_sides
from eval_harness.analysis.compare.gate import DESCRIPTIONS as GATE_DESCRIPTIONS
from eval_harness.analysis.compare.sides import SideTable
from eval_harness.analysis.compare.verdicts import VerdictRule, case_verdicts, sample_table
from eval_harness.analysis.stats.correction import adjust_pvalues
from eval_harness.errors import AnalysisError, UsageError

SCHEMA_VERSION = 1
KIND = "eval_harness.comparisons"
DEFAULT_CLUSTER_TAG = "cluster"


def parse_reference(text: str) -> dict[str, str]:
    """Parse ``--reference model=m1,effort=low`` (or ``condition_id=abc123``) to a dict."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, level = part.partition("=")
        if not sep or not name.strip():
            raise UsageError(
                f"--reference: bad item {part!r}", hint="write --reference model=m1,effort=low"
            )
        out[name.strip()] = level.strip()
    if not out:
        raise UsageError("--reference is empty", hint="write --reference model=m1,effort=low")
    return out


def condition_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per condition_id with its factor levels, in matrix order (then first seen)."""
    factors = [f for f in frame.attrs.get("factors", []) if f in frame.columns]
    conds = frame.drop_duplicates("condition_id")[["condition_id", *factors]].copy()
    order = frame.attrs.get("levels", {})

    def rank(row: pd.Series) -> tuple[int, ...]:
        keys = []
        for f in factors:
            levels = [str(x) for x in order.get(f, [])]
            v = str(row[f])
            keys.append(levels.index(v) if v in levels else len(levels))
        return tuple(keys)

    conds["_rank"] = [rank(r) for _, r in conds.iterrows()]
    conds["_seen"] = range(len(conds))
    conds = conds.sort_values(["_rank", "_seen"], kind="stable")
    return conds.drop(columns=["_rank", "_seen"]).reset_index(drop=True)


def _levels(row: Any, factors: list[str]) -> dict[str, Any]:
    return {f: _plain(row[f]) for f in factors}


def _plain(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _label(levels: Mapping[str, Any], cid: str) -> str:
    return ",".join(f"{k}={v}" for k, v in levels.items()) or cid


def select_reference(frame: pd.DataFrame, reference: Mapping[str, Any] | None) -> str:
    """The reference condition_id (see module docstring); UsageError if none or ambiguous."""
    conds = condition_table(frame)
    if conds.empty:
        raise AnalysisError("no conditions to compare")
    if not reference:
        return str(conds["condition_id"].iloc[0])
    factors = [f for f in frame.attrs.get("factors", []) if f in frame.columns]
    mask = pd.Series(True, index=conds.index)
    for key, level in reference.items():
        if key == "condition_id":
            mask &= conds["condition_id"].astype(str) == str(level)
        elif key in factors:
            mask &= conds[key].astype(str) == str(level)
        else:
            raise UsageError(
                f"--reference: unknown factor {key!r}", hint=f"factors are {', '.join(factors)}"
            )
    hits = conds[mask]
    if len(hits) != 1:
        known = "; ".join(
            _label(_levels(r, factors), str(r["condition_id"])) for _, r in conds.iterrows()
        )
        what = "matches no condition" if hits.empty else f"matches {len(hits)} conditions"
        raise UsageError(
            f"--reference {_label(dict(reference), '')} {what}",
            hint=f"name every factor; conditions are: {known}",
        )
    return str(hits["condition_id"].iloc[0])


def _clusters(frame: pd.DataFrame, key: str | None) -> tuple[str | None, dict[str, Any]]:
    tags = frame.attrs.get("case_tags", {}) or {}
    if key is None:
        key = DEFAULT_CLUSTER_TAG if any(DEFAULT_CLUSTER_TAG in t for t in tags.values()) else None
    if key is None:
        return None, {}
    return key, {str(c): t[key] for c, t in tags.items() if key in t and t[key] is not None}


class _SideTables:
    """``SideTable`` of each condition_id of a ``case_verdicts`` table, built on first use
    (one per condition, shared by all its comparisons); rows are split by one factorise."""

    def __init__(self, cases: pd.DataFrame) -> None:
        self.cases = cases
        codes, names = pd.factorize(cases["condition_id"].astype(str))
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
        self.rows = {str(n): order[bounds[i]:bounds[i + 1]] for i, n in enumerate(names)}
        self.built: dict[str, SideTable] = {}

    def __getitem__(self, cid: str) -> SideTable:
        if cid not in self.built:
            rows = self.rows.get(cid, np.empty(0, dtype=np.int64))
            self.built[cid] = SideTable(self.cases.iloc[rows])
        return self.built[cid]


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The per-case rows are hundreds of thousands of small acyclic dicts: the cyclic
    collector's passes over them were ~40% of ``build_comparisons`` at 16 conditions ×
    5,000 cases (0.6 of 1.4 CPU-s) and freed nothing. Paused while building; restored."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def build_comparisons(
    frame: pd.DataFrame,
    reference: Mapping[str, Any] | None = None,
    baseline_frame: pd.DataFrame | None = None,
    alpha: float = 0.05,
    *,
    rule: VerdictRule | None = None,
    cluster_key: str | None = None,
    n_permutations: int = 20_000,
    n_bootstrap: int = 2_000,
    cases: pd.DataFrame | None = None,
    row_columns: bool = False,
) -> dict[str, Any]:
    """The ``comparisons.json`` document (schema_version 1). See the module docstring.

    ``cases``: ``case_verdicts(sample_table(frame, rule))`` when the caller already has it.
    ``row_columns``: each comparison's ``cases`` is a ``rows.CaseRows`` (columns, rows
    built on access; ``rows.plain_comparisons`` turns the document into plain lists)."""
    with _gc_paused():
        return _build(frame, reference, baseline_frame, alpha, rule=rule,
                      cluster_key=cluster_key, n_permutations=n_permutations,
                      n_bootstrap=n_bootstrap, cases=cases, row_columns=row_columns)


def _build(
    frame: pd.DataFrame,
    reference: Mapping[str, Any] | None,
    baseline_frame: pd.DataFrame | None,
    alpha: float,
    *,
    rule: VerdictRule | None,
    cluster_key: str | None,
    n_permutations: int,
    n_bootstrap: int,
    cases: pd.DataFrame | None,
    row_columns: bool,
) -> dict[str, Any]:
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must be in (0, 1), got {alpha}")
    if frame.empty:
        raise AnalysisError("no runs to compare")
    rule = rule or VerdictRule()
    key, clusters = _clusters(frame, cluster_key)
    cases_new = cases if cases is not None else case_verdicts(sample_table(frame, rule))
    factors = [f for f in frame.attrs.get("factors", []) if f in frame.columns]
    conds = condition_table(frame)
    info = {
        str(r["condition_id"]): {
            "condition_id": str(r["condition_id"]),
            "levels": _levels(r, factors),
            "label": _label(_levels(r, factors), str(r["condition_id"])),
            "source": "runs",
        }
        for _, r in conds.iterrows()
    }
    common: dict[str, Any] = {
        "alpha": alpha,
        "clusters": clusters,
        "cluster_key": key,
        "n_permutations": n_permutations,
        "n_bootstrap": n_bootstrap,
        "row_columns": row_columns,
    }
    comparisons: list[dict[str, Any]] = []
    ref_id: str | None = None
    if len(conds) >= 2 or (reference and baseline_frame is None):
        ref_id = select_reference(frame, reference)
        sides = _SideTables(cases_new)
        for cid in conds["condition_id"].astype(str):
            if cid == ref_id:
                continue
            rec = compare_sides(
                sides[ref_id],
                sides[cid],
                reference=info[ref_id],
                candidate=info[cid],
                **common,
            )
            comparisons.append({"kind": "reference", **rec})
    baseline_block: dict[str, Any] | None = None
    if baseline_frame is not None:
        baseline_block, recs = _baseline_comparisons(baseline_frame, cases_new, info, rule, common)
        comparisons.extend(recs)
    _adjust_drops(comparisons, alpha)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "alpha": alpha,
        "verdict_rule": rule.describe(),
        "regression_rule": {
            "regressed": "verdict got worse: passed -> flaky/failed, or flaky -> failed "
            "(information; the strict gate fails on it)",
            "regressed_significant": f"two-sided Fisher exact p, Holm-adjusted over the "
            f"compared cases of one comparison, < {alpha} and a lower pass rate",
            "significant_drop": f"one-sided stratified permutation p_drop, Holm-adjusted over "
            f"the comparisons of the same kind (reference / baseline), < {alpha}",
        },
        "gate_rules": dict(GATE_DESCRIPTIONS),
        "overall_test": "case-stratified permutation test of no change in pass rate, "
        "statistic = sum of per-case standardised changes (exact convolution when feasible, "
        "else seeded Monte Carlo)",
        "reference": None if ref_id is None else info[ref_id],
        "baseline": baseline_block,
        "cluster_key": key,
        "comparisons": comparisons,
    }


def _adjust_drops(comparisons: list[dict[str, Any]], alpha: float) -> None:
    """``overall.p_drop_adjusted`` (Holm over the comparisons of one kind, R
    ``p.adjust(p, "holm")``) and ``significant_drop`` on it: with 8 conditions the
    per-comparison rule fails some comparison of an unchanged agent ~17% of the time."""
    for kind in ("reference", "baseline"):
        recs = [r for r in comparisons if r["kind"] == kind]
        raw = [r["overall"]["p_drop"] if r["overall"]["method"] != "none" else None
               for r in recs]
        adj = adjust_pvalues([np.nan if p is None else float(p) for p in raw], "holm")
        for rec, a in zip(recs, adj, strict=True):
            a = float(a)
            rec["overall"]["p_drop_adjusted"] = a if np.isfinite(a) else None
            rec["significant_drop"] = bool(np.isfinite(a) and a < alpha)


def _baseline_comparisons(
    baseline_frame: pd.DataFrame,
    cases_new: pd.DataFrame,
    info: Mapping[str, dict[str, Any]],
    rule: VerdictRule,
    common: dict[str, Any],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if baseline_frame.empty:
        raise AnalysisError("the baseline holds no runs")
    meta = dict(baseline_frame.attrs.get("baseline", {}))
    cases_old = case_verdicts(sample_table(baseline_frame, rule))
    b_factors = [f for f in baseline_frame.attrs.get("factors", []) if f in baseline_frame]
    b_conds = condition_table(baseline_frame)
    b_info = {
        str(r["condition_id"]): {
            "condition_id": str(r["condition_id"]),
            "levels": _levels(r, b_factors),
            "label": "baseline " + _label(_levels(r, b_factors), str(r["condition_id"])),
            "source": "baseline",
        }
        for _, r in b_conds.iterrows()
    }
    pairs: list[tuple[str, str]] = [(c, c) for c in info if c in b_info]
    note = None
    if not pairs and len(info) == 1 and len(b_info) == 1:
        pairs = [(next(iter(b_info)), next(iter(info)))]
        note = (
            "condition ids differ; the single baseline condition was paired with the single new one"
        )
    paired_old = {o for o, _ in pairs}
    paired_new = {n for _, n in pairs}
    recs = []
    old_sides, new_sides = _SideTables(cases_old), _SideTables(cases_new)
    for old, new in pairs:
        rec = compare_sides(
            old_sides[old],
            new_sides[new],
            reference=b_info[old],
            candidate=dict(info[new]),
            **common,
        )
        recs.append({"kind": "baseline", **rec})
    block = {
        **{k: meta.get(k) for k in ("path", "eval", "generated_at", "tool_version", "compact")},
        "note": note,
        "unmatched_new_conditions": sorted(set(info) - paired_new),
        "unmatched_baseline_conditions": sorted(set(b_info) - paired_old),
    }
    return block, recs
