"""The program's name in usage lines and hints: ``orchestrate`` (the installed command),
or ``orchestrate.py`` when run as ``python orchestrate.py`` from a checkout."""

from __future__ import annotations

import os
import sys


def prog(argv0: str | None = None) -> str:
    """``orchestrate.py`` when invoked through that script, else ``orchestrate`` (also when
    embedded, e.g. under pytest, where ``sys.argv[0]`` is another program)."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "orchestrate.py" if name == "orchestrate.py" else "orchestrate"
