"""Whether a folder this run must write in can be written, asked once before anything runs.

A read-only runs directory (a read-only mount, a folder of another user, a CI cache restored
read-only) used to surface as an internal error from the first file written into it
(``.eval_config.json.<pid>.tmp``), after the judge check, or at the end when nothing was
left to do. :func:`require_writable` asks the file system itself — it creates and removes
a probe file in the folder (or, for a folder still to be made, in its nearest existing
parent) — so the answer is the real one for root, ACLs and read-only mounts alike, and the
refusal is one line naming the folder, with the way out (exit 2, nothing run).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from eval_harness.errors import UsageError


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return probe


def require_writable(folder: Path, *, what: str, hint: str) -> None:
    """Raise UsageError (exit 2) unless files can be created in ``folder`` (or, when it
    does not exist yet, in the nearest existing folder above it, where it will be made)."""
    target = _nearest_existing(folder)
    problem = None
    if not target.is_dir():
        problem = f"{target} is not a folder"
    else:
        try:
            fd, name = tempfile.mkstemp(prefix=".write-probe.", dir=target)
        except OSError as exc:
            problem = exc.strerror or type(exc).__name__
        else:
            os.close(fd)
            os.unlink(name)
    if problem is not None:
        shown = folder if target == folder else f"{folder} (to be made in {target})"
        raise UsageError(f"the {what} {shown} is not writable: {problem}", hint=hint)
