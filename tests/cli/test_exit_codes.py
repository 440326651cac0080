"""Exit codes stay distinct: a bug (70) is not a failed gate (1); a missing optional
package is a usage error (2) with the install hint."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.analysis.rundir_writer import write_native
from tests.conftest import run_cli


def _runs(tmp_path: Path) -> Path:
    data = {(lv,): {f"c{i}": [{"ok": bool((i + k) % 2)}] for i in range(4)}
            for k, lv in enumerate(["a", "b"])}
    write_native(tmp_path / "runs", data, ["model"])
    return tmp_path / "runs"


def test_export_parquet_without_an_engine_is_a_usage_error(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs(tmp_path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    monkeypatch.setitem(sys.modules, "fastparquet", None)
    code, _, err = run_cli("--analyze-only", str(runs), "--output", str(tmp_path / "o"),
                           "--export-parquet", str(tmp_path / "f.parquet"))
    assert code == 2, err
    assert "error: --export-parquet needs pyarrow" in err and "pip install 'factorial-eval-harness[parquet]'" in err
    assert "internal error" not in err


def test_an_internal_error_is_not_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import eval_harness.analysis.compare.leaderboard as lb

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(lb, "build_leaderboard", boom)
    code, _, err = run_cli("--analyze-only", str(_runs(tmp_path)), "--output", str(tmp_path / "o"))
    assert code == 70
    assert "internal error: RuntimeError: bug" in err
