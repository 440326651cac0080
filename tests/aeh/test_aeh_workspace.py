"""An agent-eval-harness-style cli command, run for real from the repository root."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT

AEH = FIXTURES / "aeh_configs"


def _project(tmp_path: Path) -> Path:
    sub = tmp_path / "sub"
    shutil.copytree(AEH, sub, ignore=shutil.ignore_patterns("*-shape.yaml"))
    shutil.copy(AEH / "anova-shape.yaml", sub / "eval.yaml")
    return tmp_path


def _run(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "orchestrate.py"), "--config", "sub/eval.yaml",
         "--runs-dir", "runs", "--no-judge-check", "--no-analysis", *extra],
        cwd=root, capture_output=True, text=True, timeout=120, check=False)


def test_solve_script_files_are_collected_with_relative_runs_dir(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cfg = (root / "sub" / "eval.yaml").read_text()
    # keep the check judge only (no LLM here)
    cfg = cfg[:cfg.index("  - name: solution_quality")] + cfg[cfg.index("thresholds:"):]
    cfg = cfg.replace("  solution_quality:\n    min_mean: 3.0\n", "")
    (root / "sub" / "eval.yaml").write_text(cfg)
    proc = _run(root)
    assert proc.returncode == 0, proc.stderr
    records = sorted((root / "runs" / "ctx-ab").glob("*/cases/*/record.json"))
    assert len(records) == 4  # 2 contexts x 2 cases
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["status"] == "ok"
        assert rec["scores"]["tests_pass"]["value"] is True, rec["scores"]
        outputs = json.loads((path.parent / "outputs.json").read_text())
        files = outputs["files"]
        assert set(files) == {"output/solution.diff", "output/tests.json"}
        # {workspace}/input.yaml held the case input; {context} reached the command
        assert "prompt:" in files["output/solution.diff"]
        ctx = rec["levels"]["context"]
        assert f"ctx=ctx-{ctx}.json" in files["output/solution.diff"]
        # in-place edits of the workspace are its `modified_files` (outputs are in `files`)
        assert outputs["modified_files"] == {"repo/patched.txt": "edited\n"}
    assert not (root / "sub" / "runs").exists()  # nothing written beside the config
