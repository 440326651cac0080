"""``orchestrate serve``: missing extra, bad arguments, the no-login warning, a real start."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest


def test_missing_extra_exits_2_with_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         cli) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "uvicorn" else real(name, *a))
    code, _, err = cli("serve", str(tmp_path))
    assert code == 2 and "uvicorn" in err and "[serve]" in err


def test_bad_arguments_exit_2(tmp_path: Path, cli) -> None:
    assert cli("serve", str(tmp_path / "missing"))[0] == 2
    code, _, err = cli("serve", str(tmp_path), "--baseline", str(tmp_path / "nope.json"))
    assert code == 2 and "baseline" in err
    assert cli("serve", str(tmp_path), "--port", "70000")[0] == 2


def _start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "eval_harness.cli.main", "serve", *args],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("serving"):
            break
    return proc, "".join(lines)


def test_serves_and_warns_off_loopback(starter_runs: Path) -> None:
    proc, err = _start([str(starter_runs.parent), "--port", "0"])
    try:
        assert "warning" not in err
        url = err.split(" on ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=60) as resp:
            assert resp.status == 200 and b"starter" in resp.read()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    proc, err = _start([str(starter_runs.parent), "--port", "0", "--host", "0.0.0.0"])
    try:
        assert "there is no login" in err and "DNS-rebinding" in err
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
