"""Portable baseline files: export a tidy frame to versioned JSON and load it back.

A baseline lets CI compare new runs with a committed reference without any run directories.
File layout (``kind = "eval_harness.baseline"``, ``schema_version = 1``)::

    {"schema_version": 1, "kind": "eval_harness.baseline", "eval": "...",
     "generated_at": "2026-...Z", "tool_version": "0.1.0", "compact": true,
     "factors": [...], "levels": {...}, "case_tags": {...}, "issues": [...],
     "columns": [...], "dtypes": {...},
     "runs": [{"run_id", "condition_id", "eval", "replication", "levels": {...},
               "samples": [{"case_id", "case_hash", "case_status", "latency_s", "cost_usd",
                            "tokens", "tool_calls", "extra": {...},
                            "judges": {"<name>": {"value", "kind", "errored", "normalized",
                                                 "extra": {...}}},
                            "input": ..., "outputs": ...}]}]}

``compact`` files carry no ``input`` / ``outputs`` (nor traces): ids, case hashes, statuses,
judge values (the composite is the judge named "composite"), latency, cost — safe to commit.
Loading rebuilds the same tidy frame (same columns, order, dtypes and attrs), so every
comparison function accepts it as it accepts ``load_runs``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval_harness._util.clock import utc_now_iso
from eval_harness._util.json_text import write_text_atomic
from eval_harness._util.redact import redact
from eval_harness.analysis.frame_attrs import SharedDict, SharedList
from eval_harness.errors import ConfigError, UsageError

KIND = "eval_harness.baseline"
SCHEMA_VERSION = 1
RUN_COLUMNS = ("eval", "run_id", "condition_id", "replication")
SAMPLE_COLUMNS = ("case_status", "latency_s", "cost_usd", "tokens", "tool_calls", "case_hash")
JUDGE_COLUMNS = ("value", "kind", "errored", "normalized")
_HINT = "re-export it with `orchestrate --analyze-only RUNS --export FILE --compact`"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BaselineJudge(_Model):
    """One judge's score on one sample."""

    value: float | None = Field(None, description="Judge value (NaN is written null).")
    kind: str = Field("numeric", description="numeric | boolean | pairwise | composite.")
    errored: bool = Field(False, description="The judge errored (never a zero score).")
    normalized: float | None = Field(None, description="Value mapped to [0, 1].")
    extra: dict[str, Any] = Field(default_factory=dict, description="Other per-row columns.")


class BaselineSample(_Model):
    """One case in one run (one attempt)."""

    case_id: str = Field(description="Case id.")
    case_hash: str = Field("", description="Hash of the case definition.")
    case_status: str = Field("ok", description="ok | errored.")
    latency_s: float | None = Field(None, description="Seconds; null unknown.")
    cost_usd: float | None = Field(None, description="USD; null unknown.")
    tokens: float | None = Field(None, description="Total tokens; null unknown.")
    tool_calls: float | None = Field(None, description="Tool calls; null unknown.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Other per-sample columns.")
    judges: dict[str, BaselineJudge] = Field(description="Judge name -> score.")
    input: Any = Field(None, description="Resolved case input (full exports only).")
    outputs: Any = Field(None, description="Case outputs (full exports only).")


class BaselineRun(_Model):
    """One run directory: one (condition, replication)."""

    run_id: str = Field(description="Run directory name.")
    condition_id: str = Field(description="12-hex condition id.")
    eval: str = Field("", description="Eval name.")
    replication: int = Field(1, description="1-based replication.")
    levels: dict[str, Any] = Field(default_factory=dict, description="Factor -> level.")
    samples: list[BaselineSample] = Field(description="Cases of this run.")


class BaselineFile(_Model):
    """A whole baseline file."""

    schema_version: int = Field(description="Format version (1).")
    kind: str = Field(description='Always "eval_harness.baseline".')
    eval: str = Field("", description="Eval name.")
    generated_at: str = Field("", description="ISO-8601 UTC export time.")
    tool_version: str = Field("", description="eval_harness version that wrote it.")
    compact: bool = Field(True, description="True: no inputs/outputs/traces.")
    factors: list[str] = Field(default_factory=list, description="Factor names, matrix order.")
    levels: dict[str, list[Any]] = Field(default_factory=dict, description="Factor -> levels.")
    case_tags: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Tags.")
    issues: list[dict[str, Any]] = Field(default_factory=list, description="Loader issues.")
    columns: list[str] = Field(default_factory=list, description="Frame column order.")
    dtypes: dict[str, str] = Field(default_factory=dict, description="Frame column dtypes.")
    runs: list[BaselineRun] = Field(description="Runs.")


def _json_value(x: Any) -> Any:
    """JSON-safe copy: NaN → None, numpy → Python, containers recursively."""
    if isinstance(x, Mapping):
        return {str(k): _json_value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_value(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    if x is pd.NA or x is pd.NaT:
        return None
    return str(x)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _find_run_dir(root: Path, eval_name: str, run_id: str) -> Path | None:
    for cand in (root / run_id, root / eval_name / run_id):
        if (cand / "cases").is_dir():
            return cand
    return None


def export_baseline(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    compact: bool = True,
    *,
    runs_root: str | os.PathLike[str] | None = None,
    tool_version: str | None = None,
) -> dict[str, Any]:
    """Write ``frame`` as a baseline file at ``path`` (atomically); return the document.

    Full (non-compact) exports add each case's ``input`` and ``outputs`` read from
    ``runs_root/<run_id>/cases/<case>/`` (or ``runs_root/<eval>/<run_id>/...``) when found.
    """
    if frame.empty:
        raise UsageError("export_baseline: nothing to export (no runs loaded)")
    factors = [str(f) for f in frame.attrs.get("factors", [])]
    missing = [c for c in ("run_id", "condition_id", "case_id", "judge") if c not in frame]
    if missing:
        raise UsageError(f"export_baseline: frame lacks columns {missing}")
    if tool_version is None:
        from eval_harness._version import __version__ as tool_version
    known = set(RUN_COLUMNS) | set(factors) | {"case_id", "judge"}
    sample_cols = [c for c in SAMPLE_COLUMNS if c in frame.columns]
    judge_cols = [c for c in JUDGE_COLUMNS if c in frame.columns]
    extra_cols = [c for c in frame.columns if c not in known | set(sample_cols) | set(judge_cols)]
    root = Path(runs_root) if runs_root is not None else None
    eval_name = str(frame["eval"].iloc[0]) if "eval" in frame else ""
    runs: list[dict[str, Any]] = []
    for run_id, run_df in frame.groupby("run_id", sort=False, observed=True):
        first = run_df.iloc[0]
        run_dir = None if compact or root is None else _find_run_dir(root, eval_name, str(run_id))
        samples = []
        for case_id, case_df in run_df.groupby("case_id", sort=False, observed=True):
            head = case_df.iloc[0]
            sample: dict[str, Any] = {"case_id": str(case_id)}
            sample.update({c: _json_value(head[c]) for c in sample_cols})
            sample["extra"] = {}
            judges = {}
            for rec in case_df.to_dict("records"):
                entry = {c: _json_value(rec[c]) for c in judge_cols}
                entry["extra"] = {c: _json_value(rec[c]) for c in extra_cols}
                judges[str(rec["judge"])] = entry
            sample["judges"] = judges
            if run_dir is not None:
                case_dir = run_dir / "cases" / str(case_id)
                sample["input"] = _read_json(case_dir / "input.json")
                sample["outputs"] = _read_json(case_dir / "outputs.json")
            samples.append(sample)
        runs.append(
            {
                "run_id": str(run_id),
                "condition_id": str(first["condition_id"]),
                "eval": str(first["eval"]) if "eval" in run_df else "",
                "replication": int(first["replication"]) if "replication" in run_df else 1,
                "levels": {f: _json_value(first[f]) for f in factors if f in run_df},
                "samples": samples,
            }
        )
    doc = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "eval": eval_name,
        "generated_at": utc_now_iso(),
        "tool_version": str(tool_version),
        "compact": bool(compact),
        "factors": factors,
        "levels": _json_value(frame.attrs.get("levels", {})),
        "case_tags": _json_value(frame.attrs.get("case_tags", {})),
        "issues": _json_value(frame.attrs.get("issues", [])),
        "columns": [str(c) for c in frame.columns],
        "dtypes": {str(c): str(t) for c, t in frame.dtypes.items()},
        "runs": runs,
    }
    write_text_atomic(path, redact(json.dumps(doc, indent=1, allow_nan=False)) + "\n")
    return doc


def _validate(raw: Any, file: str) -> BaselineFile:
    if not isinstance(raw, dict):
        raise ConfigError("not a baseline file (expected a JSON object)", file=file, hint=_HINT)
    if raw.get("kind") != KIND:
        raise ConfigError(
            f"not an eval_harness baseline: kind is {raw.get('kind')!r}, expected {KIND!r}",
            path="kind",
            file=file,
            hint=_HINT,
        )
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise ConfigError(
            f"unsupported baseline schema_version {version!r} (this tool reads {SCHEMA_VERSION})",
            path="schema_version",
            file=file,
            hint=_HINT,
        )
    try:
        return BaselineFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ConfigError(err["msg"], path=loc, file=file, hint=_HINT) from None


def load_baseline(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a baseline file into the tidy frame (docs/api.md, the tidy frame).

    Raises ConfigError naming the file on unreadable JSON, a wrong ``kind`` or
    ``schema_version``, or a malformed entry (with its key path).
    ``attrs["baseline"]`` records {"path", "eval", "generated_at", "tool_version", "compact"}.
    """
    file = str(path)
    from eval_harness.config.jsonl import read_json_file

    # unreadable, not UTF-8, invalid or too deeply nested: exit 2 naming the file
    raw = read_json_file(Path(path), hint=_HINT)
    doc = _validate(raw, file)
    rows: list[dict[str, Any]] = []
    for run in doc.runs:
        for sample in run.samples:
            for name, judge in sample.judges.items():
                row: dict[str, Any] = {
                    "eval": run.eval,
                    "run_id": run.run_id,
                    "condition_id": run.condition_id,
                    **{f: run.levels.get(f) for f in doc.factors},
                    "replication": run.replication,
                    "case_id": sample.case_id,
                    "judge": name,
                    "value": judge.value,
                    "kind": judge.kind,
                    "errored": judge.errored,
                    "case_status": sample.case_status,
                    "latency_s": sample.latency_s,
                    "cost_usd": sample.cost_usd,
                    "tokens": sample.tokens,
                    "tool_calls": sample.tool_calls,
                    "case_hash": sample.case_hash,
                    "normalized": judge.normalized,
                }
                row.update(sample.extra)
                row.update(judge.extra)
                rows.append(row)
    frame = pd.DataFrame(rows)
    if doc.columns:
        for col in doc.columns:
            if col not in frame.columns:
                frame[col] = None
        frame = frame[doc.columns]
    for col, dtype in doc.dtypes.items():
        if col in frame.columns and str(frame[col].dtype) != dtype:
            # Keep what pandas inferred rather than fail on an exotic dtype name.
            with contextlib.suppress(TypeError, ValueError):
                frame[col] = frame[col].astype(dtype)
    frame.attrs["factors"] = list(doc.factors)
    frame.attrs["levels"] = {k: list(v) for k, v in doc.levels.items()}
    frame.attrs["issues"] = SharedList(doc.issues)
    frame.attrs["case_tags"] = SharedDict({k: dict(v) for k, v in doc.case_tags.items()})
    frame.attrs["baseline"] = {
        "path": file,
        "eval": doc.eval,
        "generated_at": doc.generated_at,
        "tool_version": doc.tool_version,
        "compact": doc.compact,
    }
    return frame
