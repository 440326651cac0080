"""Reading ``comparisons.json`` back (for scripts and tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_comparisons(out_dir: str | Path) -> dict[str, Any]:
    """The comparisons document written into ``out_dir``."""
    return dict(json.loads((Path(out_dir) / "comparisons.json").read_text(encoding="utf-8")))
