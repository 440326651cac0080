"""Reading a stored trace: the one function other tools (show, HTML report, dashboard) use."""

from __future__ import annotations

import os
from pathlib import Path

from eval_harness._util.regular_files import open_regular
from eval_harness._util.untrusted_json import loads_reply
from eval_harness.trace.model import Step, Trace

TRACE_FILE = "trace.json"
MAX_TRACE_BYTES = 20_000_000


def read_trace(case_dir: str | os.PathLike[str]) -> Trace | None:
    """The trace of one case (``<run>/cases/<case-id>/trace.json``), or None when the run
    stored none (no trace reported, ``--no-trace``) or the file is unreadable, a symlink,
    not a regular file, nested deeper than JSON's reply limit or larger than
    :data:`MAX_TRACE_BYTES` (never raises for a bad file)."""
    path = Path(case_dir) / TRACE_FILE
    try:
        if path.is_symlink():
            return None
        with os.fdopen(open_regular(path, nofollow=True), "rb") as fh:  # never a FIFO
            data = fh.read(MAX_TRACE_BYTES + 1)
        if len(data) > MAX_TRACE_BYTES:
            return None
        doc = loads_reply(data.decode("utf-8", errors="replace"))  # depth-bounded
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return None
    dropped = doc.get("dropped")
    return Trace(steps=tuple(Step.from_json(s) for s in doc["steps"] if isinstance(s, dict)),
                 dropped=dropped if isinstance(dropped, int) else 0,
                 schema_version=int(doc.get("schema_version") or 1))
