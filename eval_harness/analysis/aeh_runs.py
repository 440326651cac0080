"""One agent-eval-harness run directory for people and dashboards (``orchestrate runs`` /
``show``, report drill-down): its condition, its cases, and per case the judges' values
**and rationales**, the composite its rule gives, and latency / cost / tokens.

Where each fact comes from (its layout; the scoring is :mod:`eval_harness.analysis.aeh_import`):

- levels and condition id: ``condition.json``, else the model in ``run_result.json``;
- judges: ``summary.yaml`` ``per_case.<case>.<judge>`` (``value``, ``rationale``,
  ``error``);
- latency / cost / tokens: ``run_result.json`` ``per_case.<case>`` (``duration_s``,
  ``cost_usd``, ``token_usage``), else ``cases/<case>/run_result.json``;
- the answer: ``cases/<case>/stdout.log`` (what the agent printed), when kept;
- the input: ``cases/<case>/input.yaml``, when kept.

Everything here reads files only (a symlinked file is not followed); a missing file is a
missing fact (None), never an error.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_harness.analysis.aeh_import import (
    AehRule,
    UnreadableRun,
    case_facts,
    case_record,
    read_json_object,
    read_summary,
    run_dict,
)
from eval_harness.analysis.browse import JudgeView
from eval_harness.store.confine import open_run_file

MAX_TEXT = 200_000  # characters of a log shown as the answer


@dataclass(frozen=True)
class AehCase:
    """One case of one run."""

    case_id: str
    status: str  # ok | errored (no judge could score it)
    composite: float | None
    judges: list[JudgeView] = field(default_factory=list)
    latency_s: float | None = None
    cost_usd: float | None = None
    tokens: float | None = None
    output: str | None = None
    input: Any = None


@dataclass(frozen=True)
class AehRun:
    """One run directory: what the loader needs, plus its case ids in summary order."""

    path: Path
    run_id: str
    condition_id: str
    levels: dict[str, Any]
    cost_usd: float | None
    case_ids: list[str]


def read_run(path: str | os.PathLike[str]) -> AehRun:
    """The run's facts (UnreadableRun when summary.yaml cannot be read)."""
    summary = read_summary(str(path))
    run = run_dict(str(path), summary)
    return AehRun(Path(path), run["run_id"], run["condition_id"], dict(run["levels"]),
                  run["cost_usd"], [str(c) for c in (summary.get("per_case") or {})])


def _finite(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) \
        and math.isfinite(x) else None


def _text(path: Path) -> str | None:
    try:
        with open_run_file(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read(MAX_TEXT)
    except OSError:
        return None


def read_case(path: str | os.PathLike[str], case_id: str, rule: AehRule | None = None
              ) -> AehCase | None:
    """One case of the run (None when the summary has no such case)."""
    run_dir = Path(path)
    try:
        summary = read_summary(str(run_dir))
    except UnreadableRun:
        return None
    per_case = summary.get("per_case") or {}
    key = next((k for k in per_case if str(k) == case_id), None)
    if key is None:
        return None
    rec = case_record(key, per_case[key], rule or AehRule())
    judges = [JudgeView(str(n), s.get("value"), s.get("rationale"), bool(s.get("errored")),
                       s.get("error")) for n, s in sorted(rec["scores"].items())]
    case_dir = run_dir / "cases" / case_id
    try:
        facts = case_facts(read_json_object(str(run_dir / "run_result.json"))).get(case_id)
        if facts is None:
            own = read_json_object(str(case_dir / "run_result.json"))
            facts = case_facts({"per_case": {case_id: own}}).get(case_id) if own else None
    except UnreadableRun:
        facts = None
    latency, cost, tokens = facts if facts is not None else (None, None, None)
    inp: Any = None
    raw_input = _text(case_dir / "input.yaml")
    if raw_input is not None:
        import yaml

        try:
            inp = yaml.safe_load(raw_input)
        except yaml.YAMLError:
            inp = raw_input
    return AehCase(case_id=case_id, status="errored" if rec.get("composite_errored") else "ok",
                   composite=rec.get("composite"), judges=judges, latency_s=_finite(latency),
                   cost_usd=_finite(cost), tokens=_finite(tokens),
                   output=_text(case_dir / "stdout.log"), input=inp)
