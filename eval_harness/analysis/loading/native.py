"""This tool's run directories (the native run format): ``run.json`` / ``condition.json``
for the run, ``cases/*/record.json`` for its samples. Read in two phases by the loader:
:func:`read_native_run` (metadata, for every run), then :func:`read_native_cases` (the
samples of the runs kept), possibly in worker processes."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from typing import Any

from eval_harness.analysis.loading.chunk import MAX_REPLICATION, Chunk, is_replication
from eval_harness.analysis.loading.formats import NATIVE
from eval_harness.analysis.loading.packed import Packed, pack
from eval_harness.analysis.loading.runfiles import UnreadableRun, read_json_object
from eval_harness.judges.composite import JudgeSpec
from eval_harness.store.confine import open_run_file


def _replication(value: Any) -> int:
    """A recorded replication (default 1); UnreadableRun when it is not a sane count."""
    if value is None:
        return 1
    if not is_replication(value):
        raise UnreadableRun(f"run.json: replication {value!r} is not a whole number "
                            f"from 1 to {MAX_REPLICATION:,}")
    return value


def read_native_run(run_dir: str) -> dict[str, Any]:
    """The run dict of one run directory (UnreadableRun when its metadata is unusable)."""
    run = read_json_object(os.path.join(run_dir, "run.json"))
    cond = read_json_object(os.path.join(run_dir, "condition.json"))
    return {
        "eval": str(run.get("eval") or os.path.basename(os.path.dirname(os.path.normpath(run_dir)))),
        "run_id": str(run.get("run_id") or os.path.basename(os.path.normpath(run_dir))),
        "condition_id": str(run.get("condition_id") or cond.get("condition_id") or ""),
        "levels": run.get("levels") or cond.get("levels") or {},
        "replication": _replication(run.get("replication")),
        "finished_at": run.get("finished_at"),
        "cost_usd": None,
        "format": NATIVE,
    }


def read_native_cases(
    run_dir: str, replication: int, finished_default: str, specs: Mapping[str, JudgeSpec] | None
) -> Packed:
    """Every `cases/*/record.json` of one run (folders without a record are incomplete),
    packed (:mod:`~eval_harness.analysis.loading.packed`)."""
    chunk = Chunk(specs, finished_default)
    cases_dir = os.path.join(run_dir, "cases")
    if os.path.islink(cases_dir):  # confinement (store.confine): run data never links out
        chunk.bad_records.append(f"{cases_dir}: a symlink; not followed")
        return pack(chunk)
    try:
        with os.scandir(cases_dir) as it:
            entries = [e for e in it if not e.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return pack(chunk)
    names = []
    for e in sorted(entries, key=lambda e: e.name):
        if e.is_symlink():
            chunk.bad_records.append(f"{e.path}: a symlink; not followed")
        else:
            names.append(e.name)
    loads = json.loads
    for name in names:
        path = cases_dir + os.sep + name + os.sep + "record.json"
        try:
            with open_run_file(path) as fh:  # a symlinked record.json is refused (ELOOP)
                rec = loads(fh.read())
        except (FileNotFoundError, NotADirectoryError):
            continue  # incomplete case: no record yet
        except OSError as exc:
            why = "a symlink; not followed" if exc.errno == errno.ELOOP else exc.strerror
            chunk.bad_records.append(f"{path}: {why or exc}")
            continue
        except (ValueError, RecursionError):  # RecursionError: nesting thousands deep
            chunk.bad_records.append(f"{path}: not valid JSON (or nested too deep)")
            continue
        if isinstance(rec, dict):
            chunk.add_checked(rec, path, replication, path)
        else:
            chunk.bad_records.append(f"{path}: not a JSON object")
    return pack(chunk)
