"""The entry point run by a Python that lacks the dependencies says how to install them
(exit 2), instead of an internal error."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_orchestrate_py_without_dependencies_explains(tmp_path) -> None:
    (tmp_path / "eval.yaml").write_text("name: x\n")
    # -S: no site-packages, so pydantic & co. are missing; the checkout is on sys.path
    proc = subprocess.run([sys.executable, "-S", str(ROOT / "orchestrate.py"), "--config",
                           str(tmp_path / "eval.yaml"), "--dry-run"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "is not installed in this Python" in proc.stderr
    assert "pip install -e ." in proc.stderr and "internal error" not in proc.stderr
