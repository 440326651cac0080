"""Planning and help stay light: ``--dry-run --json`` and ``--help`` never import pandas,
numpy, scipy, statsmodels, matplotlib, rich, or the HTTP stack (http.client, ssl,
urllib.request: the judges are built at dry-run but never called) — seconds, or tenths,
of start-up (targets and measurements: docs/performance.md, bench/bench_dry_run.py).
Checked on ``sys.modules`` in a fresh interpreter, not by timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

HEAVY = ("pandas", "numpy", "scipy", "scipy.stats", "statsmodels", "matplotlib", "rich",
         "http.client", "ssl", "urllib.request", "eval_harness._util.http_post")
PROBE = f"""
import contextlib, io, json, sys
from eval_harness.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:  # argparse --help
        code = exc.code
print(json.dumps({{"code": code, "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def _probe(*argv: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [
    ("--config", str(ROOT / "configs" / "example.yaml"), "--dry-run", "--json"),
    ("--help",),
])
def test_planning_and_help_import_no_heavy_module(argv: tuple[str, ...], tmp_path: Path) -> None:
    # an empty runs directory: earlier runs of the eval (e.g. the README's example run in
    # ./runs) are read for the power prior, which needs the analysis stack
    got = _probe(*argv, "--runs-dir", str(tmp_path)) if "--dry-run" in argv else _probe(*argv)
    assert got["code"] == 0
    assert got["heavy"] == []


def test_dry_run_with_a_ddf_setting_imports_no_heavy_module(tmp_path: Path) -> None:
    """``matrix.analysis.ddf`` is validated by the config layer (config/ddf.py), not by the
    statistics stack (it used to import analysis.stats.slopes: pandas, numpy, scipy)."""
    text = (ROOT / "configs" / "example.yaml").read_text(encoding="utf-8")
    assert "    method: rm\n" in text
    edited = tmp_path / "eval.yaml"
    edited.write_text(text.replace("    method: rm\n", "    method: mixed\n    ddf: satterthwaite\n"),
                      encoding="utf-8")
    (tmp_path / "example").symlink_to(ROOT / "configs" / "example")  # the dataset, relative to the config
    got = _probe("--config", str(edited), "--dry-run", "--json", "--runs-dir", str(tmp_path / "runs"))
    assert got["code"] == 0
    assert got["heavy"] == []


def test_judge_http_reply_cap_matches_the_transport() -> None:
    """judges/llm/chat_call.py repeats the transport's reply cap (so it need not import the HTTP
    stack at start-up); the two must stay equal."""
    from eval_harness._util import http_post
    from eval_harness.judges.llm.chat_call import MAX_RESPONSE_BYTES, RetryPolicy

    assert MAX_RESPONSE_BYTES == http_post.MAX_RESPONSE_BYTES == RetryPolicy().max_bytes
