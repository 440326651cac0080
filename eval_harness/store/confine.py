"""Confinement for paths built from run data (run ids, eval names, case ids read from
``run.json`` / ``record.json`` / ``summary.yaml``), which analysis treats as untrusted.

- a name from run data is used as a path component only when it is one plain folder name
  (:func:`safe_component`: letters, digits, ``.``, ``_``, ``-``; never ``.`` or ``..``);
- a path is used only when, with every symlink resolved, it stays inside the root the
  user named (:func:`inside`);
- a run file is opened without following a symlink in its last component
  (:func:`open_run_file`; :func:`read_run_json` also bounds its size and nesting): this tool never writes symlinks into a run directory; and only
  when it is a regular file (:func:`open_regular`: a FIFO named ``record.json`` would
  block every reader forever).
"""

from __future__ import annotations

import os
import re
from typing import IO, Any

from eval_harness._util.regular_files import open_regular

_COMPONENT = re.compile(r"^[A-Za-z0-9._-]+\Z")  # \Z: `$` also matches before a final newline


def safe_component(name: Any) -> bool:
    """True when ``name`` can name exactly one entry of a folder."""
    return (isinstance(name, str) and bool(_COMPONENT.match(name))
            and name not in (".", ".."))


def inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (symlinks resolved) is ``root`` or lies under it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _nofollow(path: str, flags: int) -> int:
    return open_regular(path, flags, nofollow=True)


def open_run_file(path: str | os.PathLike[str], mode: str = "rb",
                  **kw: Any) -> IO[Any]:
    """``open`` that refuses a symlink as the last component (OSError ``ELOOP``)."""
    return open(path, mode, opener=_nofollow, **kw)


#: largest run JSON file (record.json, outputs.json, input.json) a browser reads
MAX_RUN_JSON_BYTES = 16 * 1024 * 1024


class RunFileProblem(Exception):
    """Why a run file was not read (a symlink, too large, not JSON, nested too deep)."""


def read_run_json(path: str | os.PathLike[str], *, max_bytes: int = MAX_RUN_JSON_BYTES
                  ) -> Any:
    """The JSON value of a run file, read the confined way: never through a symlink in
    its last component, only a regular file, at most ``max_bytes``, nesting bounded
    (``eval_harness._util.untrusted_json``). None when the file does not exist;
    RunFileProblem (saying why) for any other file it will not read."""
    from eval_harness._util.untrusted_json import loads_reply

    try:
        with open_run_file(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise RunFileProblem(f"{os.path.basename(path)} is a symbolic link") from None
        raise RunFileProblem(f"{os.path.basename(path)}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise RunFileProblem(f"{os.path.basename(path)} is larger than "
                             f"{max_bytes // (1024 * 1024)} MB") from None
    try:
        return loads_reply(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        raise RunFileProblem(f"{os.path.basename(path)}: {exc}"[:200]) from None
