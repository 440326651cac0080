"""The claude-code runner end to end with the REAL Claude Code CLI (npm
``@anthropic-ai/claude-code@2``; .ci/run installs it into ``.tools/claude-code``) against a
loopback Anthropic Messages API stub (tests/fixtures/anthropic_stub.py), both inside a
private network namespace (``unshare -n``: nothing can leave the machine), HOME isolated.

The stub plays a model that asks for the Write tool on scripted paths (``WRITE <path>``
lines of the prompt) and then ends; the test reads the stub's request log and the file
system. What it proves: write protection is real — under ``workspace_mode: repo`` the
agent cannot create a file in the repository (in an existing folder or beside the runs
directory), and an agent-eval-harness ``permissions.deny: [{path: answers/, tools:
[Write]}]`` stops the Write tool — while the workspace stays writable; the deny rules are
in claude's settings; a relative runs directory works (settings found, plugin loaded, the
system prompt sent).

The CLI is found through ``EVAL_HARNESS_CLAUDE_CLI``, ``.tools/claude-code`` or PATH.
Without it (or without ``unshare``/``ip``/root): skipped locally with the reason, a FAILURE
under CI=true (.ci/run installs it, so CI always runs this).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
STUB = REPO / "tests" / "fixtures" / "anthropic_stub.py"
LOCAL_CLI = REPO / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-5"
SYSTEM_MARK = "SYSTEM-PROMPT-MARK-7f3a"
PLUGIN_SKILL = "mark-skill-4c1e"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason}; under CI a missing Claude Code CLI is a failure, not a skip")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def claude_cli() -> str:
    """The real CLI's path (major version 2), and a private network namespace to run it in."""
    found = None
    for cand in (os.environ.get("EVAL_HARNESS_CLAUDE_CLI"), str(LOCAL_CLI),
                 shutil.which("claude")):
        if cand and Path(cand).is_file():
            found = cand
            break
    if found is None:
        _unavailable("the Claude Code CLI is not installed (npm install --prefix .tools/"
                     "claude-code @anthropic-ai/claude-code@2; .ci/run installs it)")
    assert found is not None
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60,
                          check=False)
    if not re.match(r"2\.\d+\.\d+ \(Claude Code\)", done.stdout.strip()):
        _unavailable(f"{found} is not Claude Code 2.x: {done.stdout.strip()!r} "
                     f"{done.stderr.strip()[-200:]!r}")
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        _unavailable("unshare (util-linux) and ip (iproute2) are needed for a private network")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True,
                           timeout=30, check=False)
    if probe.returncode:
        _unavailable(f"cannot make a private network namespace (unshare -n, needs root): "
                     f"{probe.stderr.strip()}")
    return found


def _project(tmp: Path, cli: str, runner_extra: dict[str, Any]) -> Path:
    """A repository-like project: source files, a plugin and an eval.yaml whose one cell asks
    to write into the repository, into a denied folder and into the workspace."""
    project = tmp / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    plugin = project / "plugins" / "helper"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "helper", "version": "0.1.0", "description": "test plugin"}))
    skill = plugin / "skills" / PLUGIN_SKILL
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {PLUGIN_SKILL}\ndescription: A test skill "
                                    "that does nothing.\n---\nDo nothing.\n")
    (project / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": "c1", "input": {"question": "q"}, "expected": {"answer": "a"}}]))
    prompt = "\n".join(["Create these files.", f"WRITE {project}/src/new_module.py",
                        f"WRITE {project}/NEW_AT_ROOT.txt", "WRITE answers/key.txt",
                        "WRITE allowed.txt"])
    cfg = {"name": "real-claude",
           "matrix": {"factors": {"model": [MODEL]}, "replications": 1},
           "runner": {"type": "claude-code", "command": [cli], "permission_mode": "acceptEdits",
                      "workspace_mode": "repo", "plugin_dirs": ["plugins/helper"],
                      "system_prompt": SYSTEM_MARK, **runner_extra},
           "permissions": {"deny": [{"path": "answers/", "tools": ["Write"]}]},
           "dataset": {"path": "cases.yaml"},
           "execution": {"prompt": prompt, "timeout": 180, "retries": 0, "parallelism": 1},
           "judges": [{"name": "ran", "check": "return True, 'ran'"}]}
    (project / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return project


def _run(tmp: Path, cli: str, runner_extra: dict[str, Any], *, absolute_runs: bool = False
         ) -> tuple[Path, list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    """orchestrate with a relative runs dir (``runs``, the default; absolute on request),
    next to the stub in a private network."""
    project = _project(tmp, cli, runner_extra)
    home = tmp / "home"
    home.mkdir()
    log = tmp / "requests.jsonl"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "CLAUDE_", "AGENT_EVAL_"))}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local"),
                "XDG_STATE_HOME": str(home / ".state"), "ANTHROPIC_API_KEY": "sk-ant-stub-key",
                "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_ERROR_REPORTING": "1"})
    argv = ["unshare", "-n", sys.executable, str(STUB), str(log), "--",
            sys.executable, str(REPO / "orchestrate.py"), "--config", "eval.yaml",
            "--runs-dir", str(project / "runs") if absolute_runs else "runs"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    requests = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() \
        else []
    return project, requests, done


def _tool_results(requests: list[dict[str, Any]]) -> dict[str, str]:
    """tool_use id -> the tool result claude sent back (last request wins)."""
    out: dict[str, str] = {}
    for req in requests:
        for msg in (req.get("body") or {}).get("messages") or []:
            if isinstance(msg.get("content"), list):
                for block in msg["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        content = block.get("content")
                        out[block["tool_use_id"]] = content if isinstance(content, str) \
                            else json.dumps(content)
    return out


def _case(project: Path) -> Path:
    [case] = (project / "runs").glob("real-claude/*/cases/c1")
    return case


def _ran(project: Path, requests: list[dict[str, Any]],
         done: subprocess.CompletedProcess[str]) -> tuple[Path, dict[str, str]]:
    """The cell ran ok and made its four write attempts; (workspace, tool results)."""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    case = _case(project)
    record = json.loads((case / "record.json").read_text())
    assert record["status"] == "ok", record
    results = _tool_results(requests)
    assert set(results) == {f"toolu_stub_{i}" for i in range(4)}, results
    workspace = case / "workspace"
    assert (workspace / "allowed.txt").read_text() == "written by the agent\n"  # control
    assert "created successfully" in results["toolu_stub_3"]
    return workspace, results


def _check_flags(project: Path, requests: list[dict[str, Any]]) -> None:
    """What reached claude: model, system prompt, plugin (loaded), absolute --settings and
    --plugin-dir, the compiled deny rules in the grammar it enforces."""
    main = [r for r in requests if r["path"].startswith("/v1/messages")
            and any(t.get("name") == "Write" for t in (r["body"] or {}).get("tools") or [])]
    assert main, [r["path"] for r in requests]
    assert all(r["body"]["model"] == MODEL for r in main)
    assert all(r["headers"].get("user-agent", "").startswith("claude-cli/2.") for r in main)
    assert SYSTEM_MARK in json.dumps(main[0]["body"].get("system"))  # --append-system-prompt
    assert f"helper:{PLUGIN_SKILL}" in json.dumps(main[0]["body"])  # the plugin's skill listed
    argv = json.loads((_case(project) / "command.json").read_text())["argv"]
    settings_path = Path(argv[argv.index("--settings") + 1])
    assert settings_path.is_absolute() and settings_path.is_file()
    plugin_path = Path(argv[argv.index("--plugin-dir") + 1])
    assert plugin_path.is_absolute() and plugin_path.is_dir()
    assert argv[argv.index("--disallowedTools") + 1] == "Edit(answers/**)"
    deny = json.loads(settings_path.read_text())["permissions"]["deny"]
    root = str(project.resolve())
    assert f"Edit(/{root}/src)" in deny and f"Edit(/{root}/eval.yaml)" in deny
    assert not any(rule.startswith("Write(") for rule in deny)


@pytest.mark.parametrize("absolute_runs", [False, True], ids=["relative-runs", "absolute-runs"])
def test_repo_mode_and_a_write_deny_rule_stop_real_writes(claude_cli: str, tmp_path: Path,
                                                         absolute_runs: bool) -> None:
    project, requests, done = _run(tmp_path, claude_cli, {}, absolute_runs=absolute_runs)
    workspace, results = _ran(project, requests, done)
    assert not (project / "src" / "new_module.py").exists(), results["toolu_stub_0"]
    assert not (project / "NEW_AT_ROOT.txt").exists(), results["toolu_stub_1"]
    assert not (workspace / "answers" / "key.txt").exists(), results["toolu_stub_2"]
    for i in range(3):
        assert "created successfully" not in results[f"toolu_stub_{i}"], results
    # a new file beside the runs dir is what no deny pattern can name: the guard hook's
    assert f"{project.resolve()}/NEW_AT_ROOT.txt is in the repository" in results["toolu_stub_1"]
    _check_flags(project, requests)


def test_the_deny_rules_alone_block_in_the_grammar_claude_enforces(claude_cli: str,
                                                                   tmp_path: Path) -> None:
    """Hooks off (``disableAllHooks``): the compiled ``Edit(//abs)`` / ``Edit(rel/**)`` rules
    alone refuse the writes into an existing repository folder and the denied folder."""
    project, requests, done = _run(tmp_path, claude_cli, {"settings": {"disableAllHooks": True}})
    workspace, results = _ran(project, requests, done)
    assert not (project / "src" / "new_module.py").exists(), results["toolu_stub_0"]
    assert not (workspace / "answers" / "key.txt").exists(), results["toolu_stub_2"]
    for i in (0, 2):
        assert "denied by your permission settings" in results[f"toolu_stub_{i}"], results
    # what no pattern can name (repository minus the runs dir) is left to the hook
    assert (project / "NEW_AT_ROOT.txt").exists()
    _check_flags(project, requests)
