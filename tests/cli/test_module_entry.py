"""Issue 37 friction: ``python -m eval_harness`` is the ``orchestrate`` command, and
``--version`` names the command and the distribution (one name, not a third)."""

from __future__ import annotations

import os
import subprocess
import sys

from eval_harness import __version__
from tests.conftest import ROOT


def _module(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "eval_harness", *argv], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)


def test_python_dash_m_runs_the_command() -> None:
    done = _module("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"orchestrate (factorial-eval-harness) {__version__}"
    done = _module("--config", str(ROOT / "configs" / "example.yaml"), "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    assert '"eval": "example"' in done.stdout
