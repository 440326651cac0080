"""Every broken config under tests/fixtures/broken_configs exits 2 with one line naming
the key path given in its first-line comment, and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli

CORPUS = sorted(p for p in (FIXTURES / "broken_configs").glob("[0-9]*.yaml"))


def _expected(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: ")
    return first[len("# expect: "):]


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 40


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_broken_config_exits_2_with_key_path(path: Path) -> None:
    code, out, err = run_cli("--config", str(path), "--dry-run")
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert _expected(path) in lines[0]
    assert "Traceback" not in err
    assert "hint:" in lines[0] or "invalid YAML" in lines[0] or "not found" in lines[0]


def test_broken_config_via_subprocess_has_no_traceback() -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    path = FIXTURES / "broken_configs" / "01-scalar-levels.yaml"
    proc = subprocess.run([sys.executable, str(ROOT / "orchestrate.py"), "--config", str(path),
                           "--dry-run"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "matrix.factors.model" in proc.stderr
