"""Issue 34 (minor): a hook runs in its own process group and what it starts dies with it:
a hook's background ``sleep 300 &`` does not outlive the hook (nor, so, the run)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import yaml


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie is dead, only not yet reaped by its new parent


def test_a_hooks_background_process_does_not_outlive_the_run(tmp_path: Path, cli) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "agent.py").write_text("import json\nprint(json.dumps({'output': 'ok'}))\n")
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c0", "input": {"q": "x"}}]))
    leave = f'sleep 300 & echo $! > "{pids}/$$.$RANDOM"'
    cfg = {"name": "hooked", "matrix": {"factors": {"model": ["m"]}},
           "runner": {"type": "cli", "output_format": "json",
                      "command": [sys.executable, "-S", str(tmp_path / "agent.py")]},
           "dataset": {"path": "cases.yaml"}, "execution": {"timeout": 30, "retries": 0},
           "hooks": {phase: [{"command": leave}, {"command": leave + "; exit 3",
                                                  "on_failure": "continue"}]
                     for phase in ("before_all", "before_each", "after_each",
                                   "before_scoring", "after_all")},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    started = time.monotonic()
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir",
                       str(tmp_path / "runs"), "--no-cache")
    assert code == 0, err
    assert time.monotonic() - started < 60  # a TERMed sleep goes at once: no grace waited
    left = [int(p.read_text()) for p in pids.iterdir()]
    assert len(left) == 10, left
    try:
        assert not [pid for pid in left if _alive(pid)]
    finally:
        for pid in left:
            if _alive(pid):
                os.kill(pid, 9)
