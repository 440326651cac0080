"""``--analyze-only`` loads only what it uses (issue 14, peak memory): the analysis entry
modules and a whole balanced analysis without reports never import scipy.stats (~40 MiB
RSS; t/F/normal tails come from scipy.special, analysis/stats/dist.py), scipy.signal
(~50 MiB; the permutation test's convolution is numpy.fft), scipy.optimize (~25 MiB; only
the fitted mixed models need it) or matplotlib (~27 MiB; only report.html). Checked on
``sys.modules`` in a fresh interpreter; the mixed-model and report runs show the probe
does see those modules when they are used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

HEAVY = ("scipy.stats", "scipy.signal", "scipy.optimize", "matplotlib")
ENTRY = ("eval_harness.app.analyze", "eval_harness.analysis.anova.document",
         "eval_harness.analysis.compare.build", "eval_harness.reports.report_model",
         "eval_harness.analysis.loading.tidy_frame")
PROBE = f"""
import contextlib, io, json, sys
sys.path.insert(0, {str(ROOT / "tests" / "analysis")!r})
from pathlib import Path
from rundir_writer import write_native

root, drop, argv = Path(sys.argv[1]), sys.argv[2] == "drop", sys.argv[3:]
data = {{(m, e): {{f"c{{i}}": [{{"q": float((7 * i + 3 * len(m + e) + i * (m == "m2")) % 11)}}] * 2
                 for i in range(8) if not (drop and i == 0 and (m, e) == ("m2", "high"))}}
        for m in ("m1", "m2") for e in ("low", "high")}}
write_native(root / "runs", data, ["model", "effort"], ranges={{"q": [0, 10]}})
from eval_harness.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(["--analyze-only", str(root / "runs"), "--output", str(root / "out"), *argv])
anova = json.loads((root / "out" / "anova.json").read_text())
print(json.dumps({{"code": code, "method": anova["method"]["name"],
                  "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def _run(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_analysis_entry_modules_import_no_heavy_module() -> None:
    code = (f"import json, sys\nimport {', '.join(ENTRY)}\n"
            f"print(json.dumps({{'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))")
    assert _run(code)["heavy"] == []


def test_balanced_analysis_without_reports_imports_no_heavy_module(tmp_path: Path) -> None:
    got = _run(PROBE, str(tmp_path), "keep", "--no-report")
    assert got["code"] == 0 and got["method"] == "rm"
    assert got["heavy"] == []


def test_the_probe_sees_the_modules_the_mixed_model_and_html_report_use(tmp_path: Path) -> None:
    # one case misses a cell: method auto fits the mixed model (scipy.optimize); the
    # default reports include report.html (matplotlib)
    got = _run(PROBE, str(tmp_path), "drop")
    assert got["code"] == 0 and got["method"] == "mixed"
    assert got["heavy"] == ["scipy.optimize", "matplotlib"]
    assert (tmp_path / "out" / "report.html").is_file()
