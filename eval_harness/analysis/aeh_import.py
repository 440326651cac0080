"""Read agent-eval-harness run directories into this tool's record shape.

Layout of one such run (opendatahub-io/agent-eval-harness)::

    <run>/condition.json    {"condition_id": "<their id>", "levels": {factor: level}}
    <run>/summary.yaml      run_id, judges (aggregates), per_case: {case: {judge: {value,
                            rationale, judge_type[, score_range, errored, error]}}}
    <run>/run_result.json   run-level facts: model, cost_usd (whole run), num_turns

Each run becomes a RunRecord-like dict and one CaseRecord-like dict per case (no
composite: the loader forms it from judge specs, see `composite`). Several run
directories with the same levels are replications, numbered 1.. in natural order of
their run ids; a `-r<n>` suffix is not required. Their `condition_id` is kept as recorded
(it is not this tool's hash) but conditions are identified by their levels. The run's
`cost_usd` covers the whole run, so per-case cost stays unknown and the run total is
reported separately (`attrs["run_costs"]`).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from eval_harness.config.yamlio import parse_yaml, read_yaml_text
from eval_harness.store.confine import open_run_file

SUMMARY = "summary.yaml"
CONDITION = "condition.json"
RUN_RESULT = "run_result.json"


def is_aeh_run(names: set[str]) -> bool:
    """A directory listing that looks like an agent-eval-harness run."""
    return SUMMARY in names and "run.json" not in names


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key treating digit runs as numbers (`r2` < `r10`)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


class UnreadableRun(ValueError):
    """A run's metadata file exists but cannot be read (torn, hand-edited, not JSON/YAML)."""


def read_json_object(path: str) -> dict[str, Any]:
    """A JSON file's object; {} when the file is missing. Raises :class:`UnreadableRun`
    when it exists but is not a JSON object (the loader leaves that run out, with a note)."""
    try:
        with open_run_file(path, "r", encoding="utf-8") as fh:  # a symlink is refused
            data = json.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # ValueError: JSON and UTF-8 decoding errors
        raise UnreadableRun(f"{os.path.basename(path)}: {exc}") from None
    if not isinstance(data, dict):
        raise UnreadableRun(f"{os.path.basename(path)}: not a JSON object")
    return data


def _score(raw: Any) -> dict[str, Any]:
    """One per_case judge entry → a JudgeScore-like dict."""
    if not isinstance(raw, dict):
        raw = {"value": raw}
    value = raw.get("value")
    jtype = str(raw.get("judge_type") or "").lower()
    if jtype in ("boolean", "bool", "binary") or isinstance(value, bool):
        kind = "boolean"
    elif jtype == "pairwise" or isinstance(value, str):
        kind = "pairwise"
    else:
        kind = "numeric"
    out: dict[str, Any] = {"value": value, "kind": kind, "rationale": raw.get("rationale")}
    if raw.get("score_range"):
        out["score_range"] = raw["score_range"]
    if raw.get("errored") or raw.get("error"):
        out["errored"] = True
        out["error"] = raw.get("error")
    return out


def read_aeh_run(run_dir: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(run dict, case record dicts) of one agent-eval-harness run directory.

    The run dict has `eval`, `run_id`, `condition_id`, `levels`, `cost_usd` (run total or
    None) and `finished_at` (None: the layout records no time); records have no
    `replication` (assigned by the loader over runs with the same levels).
    """
    try:
        # bounded: size, alias expansion, depth; duplicate keys refused (config.yamlio)
        summary = parse_yaml(read_yaml_text(os.path.join(run_dir, SUMMARY),
                                            nofollow=True))[0] or {}
    except (OSError, ValueError) as exc:  # YamlProblem and UnicodeDecodeError are ValueErrors
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise UnreadableRun(f"{SUMMARY}: {first}") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("per_case") or {}, dict):
        raise UnreadableRun(f"{SUMMARY}: not a mapping with a per_case mapping")
    condition = read_json_object(os.path.join(run_dir, CONDITION))
    result = read_json_object(os.path.join(run_dir, RUN_RESULT))
    run_id = str(summary.get("run_id") or os.path.basename(os.path.normpath(run_dir)))
    cost = result.get("cost_usd")
    run = {
        "eval": str(summary.get("eval") or os.path.basename(os.path.dirname(os.path.normpath(run_dir)))),
        "run_id": run_id,
        "condition_id": str(condition.get("condition_id") or ""),
        "levels": condition.get("levels") or summary.get("levels") or {},
        "cost_usd": float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        "finished_at": summary.get("finished_at"),
        "format": "agent-eval-harness",
    }
    records = []
    per_case = summary.get("per_case") or {}
    for case_id, judges in per_case.items():
        if not isinstance(judges, dict):
            judges = {}  # no judge entries: the case is recorded with no scores
        scores = {str(j): _score(v) for j, v in judges.items()}
        records.append({"case_id": str(case_id), "status": "ok", "scores": scores})
    return run, records
