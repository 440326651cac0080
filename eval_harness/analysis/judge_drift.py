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
from typing import TYPE_CHECKING, Any

from eval_harness.analysis.loading.discover import find_run_dirs
from eval_harness.store.confine import open_run_file
from eval_harness.store.index import judge_changes, recorded_judges

if TYPE_CHECKING:
    from eval_harness.config.loader import LoadedConfig

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


def _uncomparable(block: Any) -> bool:
    """A recorded judge spec holding ``${VAR}`` (kept as written, never interpolated) or a
    masked secret: its digest cannot equal the interpolated one its records carry."""
    def walk(v: Any) -> bool:
        if isinstance(v, str):
            return "${" in v or v == "***"
        if isinstance(v, dict):
            return any(walk(x) for x in v.values())
        return isinstance(v, list) and any(walk(x) for x in v)
    return walk(block.model_dump(mode="json"))


def config_digests(loaded: LoadedConfig) -> tuple[dict[str, str], frozenset[str]]:
    """(judge digests to compare the records with, judges whose edits cannot be told).

    With ``--config`` both sides are the interpolated judges. A config recorded at run time
    is never interpolated: the run's own digests, recorded beside it, are compared; a
    recording older than those leaves out of "edited" the judges whose spec holds
    ``${VAR}`` or a masked secret (never a false warning)."""
    from eval_harness.config.recorded import RECORDED, recorded_judge_digests
    from eval_harness.judges.scorer import config_judge_digests

    if loaded.path.name != RECORDED:
        return config_judge_digests(loaded.config), frozenset()
    recorded = recorded_judge_digests(loaded.path)
    if recorded is not None:
        return recorded, frozenset()
    blind = frozenset(b.name for b in loaded.config.judges if _uncomparable(b))
    return config_judge_digests(loaded.config), blind


def judge_drift(paths: Sequence[Path], current: dict[str, str],
                blind: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """{edited|added|removed: judge names} between sampled records under ``paths`` and the
    ``current`` judge digests (empty: every sampled record agrees); ``blind`` judges are
    never reported edited (their digests cannot be compared)."""
    changes: dict[str, set[str]] = {}
    for run in find_run_dirs(paths):
        if run.layout != "native":
            continue
        for rec in _scored_records(run.path):
            for kind, names in judge_changes(recorded_judges(rec), current).items():
                names = names - blind if kind == "edited" else names
                if names:
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
