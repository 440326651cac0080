"""Claude Code flags and files from the runner block's agent-eval-harness keys.

- ``system_prompt`` → ``--append-system-prompt``; ``permission_mode`` → ``--permission-mode``;
- ``allowed_tools`` / ``disallowed_tools`` (compiled ``permissions``) → ``--allowedTools`` /
  ``--disallowedTools`` with one pattern per argument (``Read(eval/**)`` is a valid one);
- ``plugin_dirs``: each directory (relative to the config) is copied into the workspace
  under ``.staged-plugins/<name>`` before the snapshot (so it is no output of the run, and
  the real path never enters the agent's context) and passed as ``--plugin-dir``;
- ``settings`` and ``workspace_mode: repo`` → one settings file per case
  (``<case>/claude-settings.json``, outside the workspace) passed as ``--settings``:
  ``runner.settings`` merged over the repo-mode rules. Repo mode lets the agent read the
  repository (the directory orchestrate runs in) via ``permissions.additionalDirectories``
  and denies writes to it (``Write``/``Edit`` of ``<repo>/**`` and git or shell commands
  that change files), as that tool does; the agent still works in its per-case workspace,
  so cells stay independent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from eval_harness.config.runner_model import RunnerBlock

SETTINGS_FILE = "claude-settings.json"
STAGED = ".staged-plugins"
#: shell commands that change the repository (denied in repo mode)
_REPO_WRITE_COMMANDS = ("git add", "git commit", "git push", "git checkout", "git reset",
                        "git restore", "git stash", "git clean", "git apply", "git rm",
                        "git mv", "rm ", "sed -i")


def _needs_settings(runner: RunnerBlock) -> bool:
    return bool(runner.settings) or runner.workspace_mode == "repo"


def agent_flags(runner: RunnerBlock, case_dir: Path) -> list[str]:
    """The extra claude argv for ``runner`` (no files touched)."""
    argv: list[str] = []
    if runner.permission_mode:
        argv += ["--permission-mode", runner.permission_mode]
    for entry in runner.plugin_dirs:
        argv += ["--plugin-dir", str(case_dir / "workspace" / STAGED / Path(entry).name)]
    if runner.system_prompt:
        argv += ["--append-system-prompt", runner.system_prompt]
    if runner.allowed_tools:
        argv += ["--allowedTools", *runner.allowed_tools]
    if runner.disallowed_tools:
        argv += ["--disallowedTools", *runner.disallowed_tools]
    if _needs_settings(runner):
        argv += ["--settings", str(case_dir / SETTINGS_FILE)]
    return argv


def settings_document(runner: RunnerBlock, repo: Path) -> dict[str, Any]:
    """The settings file's content: repo-mode rules, then ``runner.settings`` over them
    (mappings merged, lists extended, scalars replaced)."""
    doc: dict[str, Any] = {}
    if runner.workspace_mode == "repo":
        root = str(repo.resolve())
        doc["permissions"] = {
            "additionalDirectories": [root],
            "deny": [f"Write({root}/**)", f"Edit({root}/**)",
                     *(f"Bash({cmd}*)" for cmd in _REPO_WRITE_COMMANDS)],
        }
    return _merge(doc, dict(runner.settings))


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        elif isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = out[key] + [v for v in value if v not in out[key]]
        else:
            out[key] = value
    return out


def stage_agent_files(runner: RunnerBlock, config_dir: Path, case_dir: Path,
                      workspace: Path) -> None:
    """Copy the plugins into the workspace and write the settings file, if any."""
    for entry in runner.plugin_dirs:
        source = (config_dir / entry).resolve()
        dest = workspace / STAGED / source.name
        if not dest.exists():
            shutil.copytree(source, dest, symlinks=False,
                            ignore=shutil.ignore_patterns(".git", "__pycache__"))
    if _needs_settings(runner):
        doc = settings_document(runner, Path.cwd())
        (case_dir / SETTINGS_FILE).write_text(json.dumps(doc, indent=2), encoding="utf-8")
