"""Records scored by other judges than the analysis config's (a stale-verdict warning).

Every record carries ``judge_digests`` ({judge: digest of its spec}, written when it was
scored). ``--analyze-only --config new.yaml`` over runs scored with other judges would
report old verdicts as current; :func:`judge_drift` compares a few records per run
directory (the first scored ones: a run's records are scored by one invocation, and reading
every record again would double the load time) with the config's judges.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval_harness.analysis.discover import find_run_dirs
from eval_harness.store.confine import open_run_file
from eval_harness.store.index import judge_changes, recorded_judges

#: records read per run directory
SAMPLED = 3


def _scored_records(run_dir: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with os.scandir(os.path.join(run_dir, "cases")) as it:
            names = sorted(e.name for e in it)
    except OSError:
        return out
    for name in names:
        try:
            with open_run_file(os.path.join(run_dir, "cases", name, "record.json")) as fh:
                rec = json.loads(fh.read(4 * 1024 * 1024))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and rec.get("status") == "ok" and isinstance(rec.get("scores"), dict):
            out.append(rec)
            if len(out) >= SAMPLED:
                break
    return out


def judge_drift(paths: Sequence[Path], current: dict[str, str]) -> dict[str, set[str]]:
    """{edited|added|removed: judge names} between sampled records under ``paths`` and the
    ``current`` judge digests (empty: every sampled record agrees)."""
    changes: dict[str, set[str]] = {}
    for run in find_run_dirs(paths):
        if run.layout != "native":
            continue
        for rec in _scored_records(run.path):
            for kind, names in judge_changes(recorded_judges(rec), current).items():
                changes.setdefault(kind, set()).update(names)
    return changes


def drift_warning(changes: dict[str, set[str]]) -> str | None:
    """The one-line warning for :func:`judge_drift`'s result, or None."""
    if not changes:
        return None
    what = "; ".join(f"{kind}: {', '.join(sorted(names))}" for kind, names in sorted(changes.items()))
    return (f"warning: the records were scored by other judges than the config's ({what}); "
            "their verdicts are not the config's — rerun with --config ... --rescore (or "
            "rerun the matrix) to rescore them")
