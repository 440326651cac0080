"""Fixtures of the dashboard tests: a writable copy of the starter eval's runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from serve_helpers import BASE, PORT, ready


@pytest.fixture
def runs_copy(starter_runs: Path, tmp_path: Path) -> Path:
    """runs/ holding a copy of runs/starter/ (labels may be written into it)."""
    root = tmp_path / "runs"
    shutil.copytree(starter_runs, root / "starter")
    return root


@pytest.fixture
def client(runs_copy: Path):
    """A Starlette TestClient on the dashboard, sending Host 127.0.0.1:8765."""
    import warnings

    from eval_harness.serve.app import create_app

    # pages wait for the analysis (a loaded CI machine must not see "analysing…")
    app = create_app([runs_copy], host="127.0.0.1", port=PORT, wait_s=120)
    ready(app)
    with warnings.catch_warnings():  # starlette >= 1.x prefers `httpx2`; httpx still works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        c = TestClient(app, base_url=BASE)
    with c:
        yield c
    app.dash.cache.close()
