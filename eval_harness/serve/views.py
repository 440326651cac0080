"""What each page shows, computed from an :class:`EvalData` (no HTTP, no templates).

Every parameter arriving from a URL is checked against the eval's own ids (conditions,
cases, judges, factors, baselines by index) before use; an unknown value is a
:class:`NotFound`, never a path or a pandas query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_harness._util.numbers import as_finite
from eval_harness.serve.evaldata import EvalData

PAGE_SIZE = 50
VERDICTS = ("passed", "flaky", "failed", "errored", "unscored")
CATEGORIES = ("regressed", "improved", "flaky", "modified", "errored", "unchanged")
SORTS = ("case", "diff", "composite")
MAX_COMPARE_CACHE = 8


class NotFound(LookupError):
    """A URL parameter that names nothing in this eval (404)."""



def page_of(items: list[Any], page: int, size: int = PAGE_SIZE) -> tuple[list[Any], dict[str, int]]:
    """One page of ``items`` and the pager's numbers (page is clamped into range)."""
    pages = max(1, math.ceil(len(items) / size))
    page = min(max(1, page), pages)
    return items[(page - 1) * size: page * size], {"page": page, "pages": pages,
                                                    "total": len(items)}


def condition_labels(data: EvalData) -> dict[str, str]:
    """condition_id -> short label (the report's)."""
    return {c["condition_id"]: c.get("short_label") or c["condition_id"][:6]
            for c in data.report["conditions"]}


def check_condition(data: EvalData, cid: str) -> str:
    if cid not in data.condition_ids:
        raise NotFound(f"no condition {cid!r} in this eval")
    return cid


def check_case(data: EvalData, case_id: str) -> str:
    if case_id not in data.verdicts.index:
        raise NotFound(f"no case {case_id!r} in this eval")
    return case_id


def judge_names(data: EvalData) -> list[str]:
    """The eval's judges (composite excluded), sorted."""
    return sorted({str(j) for j in data.frame["judge"].unique()} - {"composite"})


@dataclass(frozen=True)
class GridFilter:
    """The eval page's case-grid filters (validated)."""

    verdict: str = ""
    judge: str = ""
    factor: str = ""
    level: str = ""
    q: str = ""
    page: int = 1


def parse_grid_filter(data: EvalData, params: dict[str, str]) -> GridFilter:
    """Validate the case-grid query parameters."""
    verdict = params.get("verdict", "")
    if verdict and verdict not in VERDICTS:
        raise NotFound(f"unknown verdict {verdict!r}")
    judge = params.get("judge", "")
    if judge and judge not in judge_names(data):
        raise NotFound(f"no judge {judge!r}")
    factor, _, level = params.get("level", "").partition("=")
    levels = data.report["design"].get("factors") or {}
    if factor and (factor not in levels or level not in map(str, levels[factor])):
        raise NotFound(f"no level {factor}={level}")
    try:
        page = int(params.get("page", "1"))
    except ValueError:
        raise NotFound("page must be a number") from None
    return GridFilter(verdict, judge, factor, level, params.get("q", "")[:200], page)


def case_grid(data: EvalData, flt: GridFilter) -> dict[str, Any]:
    """One page of the cases x conditions grid under ``flt``."""
    cids = data.condition_ids
    if flt.factor:
        by_id = {c["condition_id"]: c for c in data.report["conditions"]}
        cids = [c for c in cids if str(by_id[c]["levels"].get(flt.factor)) == flt.level]
    grid = data.verdicts[cids]
    if flt.verdict:
        grid = grid[(grid == flt.verdict).any(axis=1)]
    ids = sorted(map(str, grid.index))
    if flt.q:
        needle = flt.q.lower()
        ids = [c for c in ids if needle in c.lower()]
    shown, pager = page_of(ids, flt.page)
    values = data.judge_grid(flt.judge) if flt.judge else None
    rows = []
    for case in shown:
        cells = []
        for cid in cids:
            verdict = grid.at[case, cid] if case in grid.index else None
            value = as_finite(values.at[case, cid]) if values is not None and case in values.index else None
            cells.append({"verdict": verdict if isinstance(verdict, str) else "missing",
                          "value": value})
        rows.append({"case_id": case, "cells": cells})
    labels = condition_labels(data)
    return {"conditions": [{"id": c, "label": labels.get(c, c)} for c in cids],
            "rows": rows, "pager": pager}


def status_counts(data: EvalData) -> dict[str, int]:
    """Case verdict counts over every (condition, case)."""
    return {str(k): int(v) for k, v in data.cases["verdict"].value_counts().items()}


def leaderboard(data: EvalData) -> dict[str, Any] | None:
    """The leaderboard rows, plus the cheapest condition not distinguishable from the best."""
    board = data.report.get("leaderboard")
    if not board:
        return None
    tied = [r for r in board["rows"] if r.get("indistinguishable_from_best")]
    priced = [r for r in tied if as_finite(r.get("cost_usd")) is not None]
    cheapest = min(priced, key=lambda r: r["cost_usd"]) if priced else None
    return {**board, "cheapest_tied": cheapest, "n_tied": len(tied)}


def _category(row: dict[str, Any]) -> str:
    if row.get("status") == "modified":
        return "modified"
    if row.get("status") == "errored":
        return "errored"
    if row.get("regressed"):
        return "regressed"
    if row.get("improved"):
        return "improved"
    sides = (row.get("reference") or {}, row.get("candidate") or {})
    if any(s.get("verdict") == "flaky" for s in sides):
        return "flaky"
    return "unchanged"


def _comparison(data: EvalData, a: str, b: str, baseline: Path | None) -> dict[str, Any]:
    from eval_harness.analysis.compare.baseline import load_baseline
    from eval_harness.analysis.compare.build import build_comparisons
    key = f"{a}|{b}|{baseline}"
    cache: dict[str, Any] = data.memo.setdefault("compare", {})
    if key in cache:
        return cache[key]
    rule = data.rule  # the analysis' pass rule: pass mark and gate judges
    f = data.frame
    if baseline is not None:
        sub = f[f["condition_id"].astype(str) == b]
        doc = build_comparisons(sub, None, load_baseline(baseline), rule=rule)
        recs = [r for r in doc["comparisons"] if r.get("kind") == "baseline"]
    else:
        sub = f[f["condition_id"].astype(str).isin([a, b])]
        levels = next(c["levels"] for c in data.report["conditions"] if c["condition_id"] == a)
        doc = build_comparisons(sub, {k: str(v) for k, v in levels.items()}, rule=rule)
        recs = doc["comparisons"]
    if not recs:
        raise NotFound("the baseline has no run of this condition")
    rec = recs[0]
    rows = [{**r, "category": _category(r)} for r in rec["cases"]]
    out = {"record": {k: v for k, v in rec.items() if k != "cases"}, "rows": rows}
    if len(cache) >= MAX_COMPARE_CACHE:
        cache.pop(next(iter(cache)))
    cache[key] = out
    return out


def compare(data: EvalData, params: dict[str, str], baselines: list[Path]) -> dict[str, Any]:
    """The compare page: condition b against condition a, or against baseline file N."""
    cids = data.condition_ids
    a = check_condition(data, params.get("a") or cids[0])
    b = check_condition(data, params.get("b") or (cids[1] if len(cids) > 1 else cids[0]))
    base = params.get("baseline", "")
    path = None
    if base:
        if not base.isdigit() or int(base) >= len(baselines):
            raise NotFound(f"no baseline {base!r} (pass --baseline FILE to serve)")
        path = baselines[int(base)]
    category = params.get("category", "")
    if category and category not in CATEGORIES:
        raise NotFound(f"unknown category {category!r}")
    sort = params.get("sort", "case")
    if sort not in SORTS:
        raise NotFound(f"unknown sort {sort!r}")
    try:
        page = int(params.get("page", "1"))
    except ValueError:
        raise NotFound("page must be a number") from None
    same = a == b and path is None
    doc = {"record": None, "rows": []} if same else _comparison(data, a, b, path)
    rows = doc["rows"]
    counts = {c: sum(r["category"] == c for r in rows) for c in CATEGORIES}
    if category:
        rows = [r for r in rows if r["category"] == category]
    if sort == "diff":
        rows = sorted(rows, key=lambda r: as_finite(r.get("pass_rate_diff")) or 0.0)
    elif sort == "composite":
        rows = sorted(rows, key=lambda r: as_finite(r.get("composite_diff")) or 0.0)
    shown, pager = page_of(rows, page)
    labels = condition_labels(data)
    return {"a": a, "b": b, "a_label": labels[a] if path is None else f"baseline {path.name}",
            "b_label": labels[b], "baseline": base, "category": category, "sort": sort,
            "counts": counts, "rows": shown, "pager": pager, "record": doc["record"],
            "conditions": [{"id": c, "label": labels[c]} for c in cids],
            "baselines": [{"index": i, "name": p.name} for i, p in enumerate(baselines)]}


def trends(data: EvalData, baselines: list[Path]) -> dict[str, Any]:
    """Pass rate and mean composite of each condition per run (by finish time) and per
    baseline file (by export time)."""
    from eval_harness.analysis.compare.baseline import load_baseline

    s = data.samples[~data.samples["errored"]]
    per_run = s.groupby(s["run_id"].astype(str)).agg(pass_rate=("passed", "mean"),
                                                     composite=("composite", "mean"))
    labels = condition_labels(data)
    points: list[dict[str, Any]] = []
    for run_id, row in per_run.iterrows():
        meta = data.runs.get(str(run_id))
        if meta is None:
            continue
        points.append({"when": meta.finished_at or meta.started_at or "", "source": str(run_id),
                       "condition_id": meta.condition_id, "replication": meta.replication,
                       "pass_rate": as_finite(row["pass_rate"]), "composite": as_finite(row["composite"])})
    for path in baselines:
        try:
            frame = load_baseline(path)
        except Exception as exc:  # a bad baseline is named on the page, never dropped silently
            points.append({"when": "", "source": f"{path.name}: {exc}", "condition_id": "",
                           "replication": 0, "pass_rate": None, "composite": None})
            continue
        when = str(frame.attrs.get("baseline", {}).get("generated_at") or "")
        from eval_harness.analysis.compare.verdicts import verdict_tables

        bs, _ = verdict_tables(frame, data.rule)
        bs = bs[~bs["errored"]]
        for cid, g in bs.groupby(bs["condition_id"].astype(str)):
            points.append({"when": when, "source": f"baseline {path.name}", "condition_id": cid,
                           "replication": 0, "pass_rate": as_finite(g["passed"].mean()),
                           "composite": as_finite(g["composite"].mean())})
    points.sort(key=lambda p: (p["when"], p["source"]))
    series: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        if p["condition_id"]:
            series.setdefault(p["condition_id"], []).append(p)
    return {"points": points, "series": series, "labels": labels}


def search(data: EvalData, q: str, limit: int = PAGE_SIZE,
           max_files: int = 20_000) -> dict[str, Any]:
    """Cases whose id, input or answer contains ``q`` (case-insensitive): ids first, then
    inputs, then answers, stopping at ``limit`` hits or ``max_files`` answers read."""
    import os

    from eval_harness._util.atomic_files import read_json

    needle = q.strip().lower()
    hits: dict[str, str] = {}
    if not needle:
        return {"q": q, "hits": [], "scanned": 0, "complete": True}
    for case in data.case_order:
        if needle in case.lower():
            hits[case] = "case id"
            if len(hits) >= limit:
                break
    runs = [r for r in data.runs.values() if r.layout == "native"]
    scanned, complete = 0, True
    for kind, name in (("input", "input.json"), ("answer", "outputs.json")):
        for run in (runs[:1] if kind == "input" else runs):
            for case in data.case_order:
                if len(hits) >= limit:
                    break
                if case in hits:
                    continue
                if scanned >= max_files:
                    complete = False
                    break
                scanned += 1
                doc = read_json(os.path.join(run.path, "cases", case, name))
                text = str(doc.get("output") if kind == "answer" and isinstance(doc, dict) else doc)
                if needle in text.lower():
                    hits[case] = f"{kind} ({run.run_id})" if kind == "answer" else kind
    return {"q": q, "hits": [{"case_id": c, "where": w} for c, w in hits.items()],
            "scanned": scanned, "complete": complete and len(hits) < limit}


def label_table(data: EvalData, labels: dict[Any, Any]) -> dict[str, dict[str, Any]]:
    """(run_id|case|judge) -> the label that counts, for marking buttons on the case page."""
    runs = {(r.condition_id, r.replication): r.run_id for r in data.runs.values()}
    out = {}
    for (cid, rep, case, judge), row in labels.items():
        out[f"{runs.get((cid, rep), row.run)}|{case}|{judge}"] = row.model_dump()
    return out


def frame_summary(data: EvalData) -> dict[str, Any]:
    """The evals page's numbers for an analysed eval."""
    import pandas as pd

    f = data.samples
    cost = pd.to_numeric(f["cost_usd"], errors="coerce")
    return {"conditions": len(data.condition_ids), "cases": len(data.case_order),
            "replications": int(f["replication"].max()) if len(f) else 0,
            "status": status_counts(data),
            "cost": float(cost.sum()) if cost.notna().any() else None}
