"""The starter eval that ``orchestrate init`` writes (shipped inside the wheel).

``template/`` holds ``eval.yaml`` (a 2x2 matrix), ``agent.py`` (a small stdlib cli agent),
``cases.jsonl`` (10 cases); it runs with no API key and no network.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from eval_harness.errors import UsageError

#: the files written, in this order (the template folder also holds nothing else)
TEMPLATE_FILES = ("eval.yaml", "agent.py", "cases.jsonl")


def template_text(name: str) -> str:
    """The text of one template file (read from the installed package)."""
    return (files(__name__) / "template" / name).read_text(encoding="utf-8")


def scaffold(target: str | Path, *, force: bool = False) -> list[Path]:
    """Write the starter eval into ``target`` (created if missing); return the files written.

    Refuses (UsageError, exit 2) to overwrite an existing file unless ``force``.
    """
    root = Path(target)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a directory", hint="pick a new folder name")
    clash = [root / n for n in TEMPLATE_FILES if (root / n).exists()]
    if clash and not force:
        raise UsageError(f"{', '.join(map(str, clash))} already exist(s); nothing was written",
                         hint="choose another folder, or pass --force to overwrite")
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TEMPLATE_FILES:
        path = root / name
        path.write_text(template_text(name), encoding="utf-8")
        written.append(path)
    (root / "agent.py").chmod(0o755)
    return written
