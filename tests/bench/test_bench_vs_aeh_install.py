"""bench_vs_aeh.py measures the default install: it refuses when packages of an optional
extra are importable (naming them), unless --allow-extras, and names the install."""

from __future__ import annotations

import importlib.metadata as md
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_vs_aeh

REQUIRES = ["pyyaml>=6", "pandas>=2.0", "ryaml>=0.5; extra == \"fast\"",
            "pyarrow>=14; extra == 'parquet'", "pytest>=7; extra == \"dev\"",
            "pandas>=2; extra == 'dev'"]


class _Dist:
    requires = REQUIRES


def _fake(installed: set[str]) -> Any:
    def distribution(name: str) -> Any:
        if name == bench_vs_aeh.PACKAGE:
            return _Dist()
        if name in installed:
            return object()
        raise md.PackageNotFoundError(name)
    return distribution


def test_extras_found_by_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(md, "distribution", _fake({"ryaml", "pandas", "pyyaml"}))
    assert bench_vs_aeh.extras_installed() == {"fast": ["ryaml"]}  # pandas is core
    monkeypatch.setattr(md, "distribution", _fake({"pandas", "pyyaml"}))
    assert bench_vs_aeh.extras_installed() == {}
    assert bench_vs_aeh.install_name({}) == "default install (no extras)"


def test_refuses_with_extras_unless_allowed(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bench_vs_aeh, "extras_installed", lambda: {"fast": ["ryaml"]})
    measured: list[str] = []
    monkeypatch.setattr(bench_vs_aeh, "measure", lambda size, *a: measured.append(size))
    with pytest.raises(SystemExit, match=r"refusing to measure.*fast: ryaml.*--allow-extras"):
        bench_vs_aeh.main(["--sizes", "2x10x1", "--sides", "ours"])
    assert measured == []
    bench_vs_aeh.main(["--sizes", "2x10x1", "--sides", "ours", "--allow-extras"])
    assert measured == ["2x10x1"]
    out = capsys.readouterr()
    assert "install: WITH EXTRAS (not the default install): fast: ryaml" in out.out
    assert "WARNING" in out.err


def test_default_install_measures_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bench_vs_aeh, "extras_installed", lambda: {})
    monkeypatch.setattr(bench_vs_aeh, "measure", lambda *a: None)
    bench_vs_aeh.main(["--sizes", "2x10x1"])
    assert "install: default install (no extras)" in capsys.readouterr().out
