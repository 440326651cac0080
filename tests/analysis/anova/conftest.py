"""The anova-document tests share tests/analysis's run-directory writers (rundir_writer,
golden_data): put that directory on the import path."""

from __future__ import annotations

import sys
from pathlib import Path

_ANALYSIS_TESTS = str(Path(__file__).resolve().parent.parent)
if _ANALYSIS_TESTS not in sys.path:
    sys.path.insert(0, _ANALYSIS_TESTS)
