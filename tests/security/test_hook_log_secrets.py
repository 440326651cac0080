"""Issue 34, attack 5: what a hook prints goes through the same secret mask as the agent's
own logs: a hook printing OPENAI_API_KEY and GITHUB_TOKEN leaves neither value in any file
under the runs directory (the folder the Action uploads)."""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

KEYS = {"OPENAI_API_KEY": "sk-hook-leak-0123456789abcdef",
        "GITHUB_TOKEN": "ghs_hookLeakToken0123456789"}
PRINT = ('echo "key=$OPENAI_API_KEY token=$GITHUB_TOKEN"; '
         'echo "again $OPENAI_API_KEY" >&2; printf "%s" "$GITHUB_TOKEN"')


def test_no_key_a_hook_prints_stays_in_the_runs_dir(tmp_path: Path, cli, monkeypatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "agent.py").write_text(
        "import json, os\nprint(os.environ['OPENAI_API_KEY'])\n"
        "print(json.dumps({'output': 'ok'}))\n")
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"question": f"q{i}"}} for i in range(2)]))
    cfg = {"name": "hooked", "matrix": {"factors": {"model": ["m"]}},
           "runner": {"type": "cli", "output_format": "json",
                      "command": [sys.executable, "-S", str(tmp_path / "agent.py")]},
           "dataset": {"path": "cases.yaml"}, "execution": {"timeout": 30, "retries": 0},
           "hooks": {phase: [{"command": PRINT}, {"command": PRINT + "; exit 3",
                                                  "on_failure": "continue"}]
                     for phase in ("before_all", "before_each", "after_each",
                                   "before_scoring", "after_all")},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    runs = tmp_path / "runs"
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir", str(runs),
                       "--no-cache")
    assert code == 0, err
    logs = list((runs / "hooked" / "hooks").glob("*.log"))
    assert len(logs) == 2 * (2 + 3 * 2), logs  # the hooks ran and logged
    assert all("***" in p.read_text() for p in logs)
    for path in runs.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for name, value in KEYS.items():
                assert value.encode() not in data, (name, path)
