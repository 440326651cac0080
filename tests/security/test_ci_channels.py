"""Issue 34, attack 4: no child we start sees the CI runner's step files or command
channels. An agent (cli and claude-code runners), the hooks and a ``check`` judge (the
user-code process) try to append to ``$GITHUB_ENV``, ``$GITHUB_PATH``, ``$GITHUB_OUTPUT``,
...: the variables are unset there and the files stay as they were."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

CHANNELS = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
TOKENS = {"ACTIONS_RUNTIME_TOKEN": "actions-runtime-tok-123456",
          "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-tok-123456",
          "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.test/x"}

AGENT = f"""\
import json, os
names = {list(CHANNELS)!r}
seen = sorted(k for k in os.environ if k in names or k.startswith("ACTIONS_"))
for name in names:
    if os.environ.get(name):  # what a hostile agent does with them
        with open(os.environ[name], "a") as fh:
            fh.write("/tmp/evil\\n" if name == "GITHUB_PATH" else "EH_OUTPUT=pwned\\nexit-code=0\\n")
text = json.dumps(seen)
print(json.dumps({{"output": text, "result": text, "is_error": False}}))
"""
HOOK = ("env | grep -E '^(GITHUB_(ENV|PATH|OUTPUT|STATE|STEP_SUMMARY)|ACTIONS_)' >> {seen} "
        "|| true; if [ -n \"$GITHUB_ENV\" ]; then echo X=1 >> \"$GITHUB_ENV\"; fi")
JUDGE = ("return not [k for k in __import__('os').environ if k.startswith(('GITHUB_ENV', "
         "'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY', "
         "'ACTIONS_'))], 'clean'")


@pytest.mark.parametrize("runner", ["cli", "claude-code"])
def test_no_child_sees_the_step_files_or_actions_tokens(tmp_path: Path, cli, monkeypatch,
                                                        runner: str) -> None:
    steps = tmp_path / "step-files"
    steps.mkdir()
    for name in CHANNELS:
        (steps / name).write_text("before\n")
        monkeypatch.setenv(name, str(steps / name))
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"question": f"q{i}"}} for i in range(2)]))
    seen = tmp_path / "hook-seen.txt"
    command = [sys.executable, "-S", str(tmp_path / "agent.py")]
    cfg = {"name": "ci", "matrix": {"factors": {"model": ["m"]}},
           "runner": ({"type": "cli", "command": command, "output_format": "json"}
                      if runner == "cli" else {"type": "claude-code", "command": command}),
           "dataset": {"path": "cases.yaml"},
           "execution": {"timeout": 30, "retries": 0, "prompt": "{{ input.question }}"},
           "hooks": {phase: [{"command": HOOK.format(seen=seen)}]
                     for phase in ("before_all", "before_each", "before_scoring", "after_all")},
           "judges": [{"name": "clean", "check": JUDGE}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir",
                       str(tmp_path / "runs"), "--no-analysis", "--no-cache")
    assert code == 0, err
    for name in CHANNELS:
        assert (steps / name).read_text() == "before\n", name  # nothing appended
    assert not seen.exists() or seen.read_text() == "", seen.read_text()  # hooks: unset
    cases = list((tmp_path / "runs" / "ci").glob("*/cases/*"))
    assert len(cases) == 2
    for case in cases:
        assert json.loads((case / "outputs.json").read_text())["output"] == "[]"  # agent
        rec = json.loads((case / "record.json").read_text())
        assert rec["scores"]["clean"]["value"] is True, rec["scores"]  # check judge
