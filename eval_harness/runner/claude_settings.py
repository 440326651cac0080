"""Claude Code flags and files from the runner block's agent-eval-harness keys.

- ``system_prompt`` → ``--append-system-prompt``; ``permission_mode`` → ``--permission-mode``;
- ``allowed_tools`` / ``disallowed_tools`` (compiled ``permissions``) → ``--allowedTools`` /
  ``--disallowedTools`` with one pattern per argument (``Read(eval/**)`` is a valid one);
- ``plugin_dirs``: each directory (relative to the config) is copied into the workspace
  under ``.staged-plugins/<name>`` before the snapshot — folders and regular files only: a
  symbolic link, FIFO or device inside is refused before any cell runs (exit 2, naming
  it), so nothing outside the folder is ever copied and a link loop is one clear error (so it is no output of the run, and
  the real path never enters the agent's context) and passed as ``--plugin-dir``;
- ``settings`` and ``workspace_mode: repo`` → one settings file per case
  (``<case>/claude-settings.json``, outside the workspace) passed as ``--settings``:
  ``runner.settings`` merged over the repo-mode rules. Repo mode lets the agent read the
  repository (the directory orchestrate runs in) via ``permissions.additionalDirectories``
  and keeps it out of writing there; the agent still works in its per-case workspace, so
  cells stay independent.

Every path handed to claude is absolute: claude runs in the workspace, so a relative
``--settings`` / ``--plugin-dir`` (a relative runs directory) would not be found.

The grammar the real CLI enforces (checked against Claude Code 2.1 in
tests/runner/test_claude_code_real.py): a path rule's tool must be ``Edit`` to stop a
write — ``Edit`` rules govern every file-writing tool (Write, Edit, NotebookEdit), while
``Write(path)`` rules are not applied to the Write tool at all; an absolute path is written
``//abs/path`` (``/abs/path`` is read relative to the settings file); a path without a
leading slash is relative to the working directory (the workspace); a pattern naming a
directory also covers everything below it, and a deny always wins over an allow. So repo
mode denies ``Edit(//<repo>/**)``; when the workspace lies inside the repository (a runs
directory under it, the default) that rule would deny the workspace too, so it denies each
existing entry beside the path down to the workspace instead (``Edit(//<repo>/src)``, ...),
and a ``PreToolUse`` hook (:data:`REPO_GUARD`, run in every permission mode) refuses any
file-writing call whose target is in the repository but outside the workspace — the case
(a new file beside that path) no deny pattern can name. Shell commands that change files
are denied as ``Bash(...)`` prefixes.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

from eval_harness._util.file_modes import create_file, limit, make_dirs
from eval_harness._util.regular_files import open_regular
from eval_harness.config.runner_model import RunnerBlock
from eval_harness.errors import ConfigError

SETTINGS_FILE = "claude-settings.json"
STAGED = ".staged-plugins"
#: shell commands that change the repository (denied in repo mode)
_REPO_WRITE_COMMANDS = ("git add", "git commit", "git push", "git checkout", "git reset",
                        "git restore", "git stash", "git clean", "git apply", "git rm",
                        "git mv", "rm ", "sed -i")
#: the file-writing tools (every one governed by ``Edit(...)`` rules)
WRITE_TOOLS = "Write|Edit|MultiEdit|NotebookEdit"
#: the repo-mode ``PreToolUse`` hook: ``python -S -c REPO_GUARD <repo> <workspace>`` exits 2
#: (claude refuses the call, whatever the permission mode) when the tool's target lies in
#: the repository but not in the workspace
REPO_GUARD = """import json, os, sys
repo, ws = sys.argv[1], sys.argv[2]
args = json.load(sys.stdin).get("tool_input") or {}
target = args.get("file_path") or args.get("notebook_path")
def inside(p, d):
    return p == d or p.startswith(d.rstrip("/") + "/")
if target:
    path = os.path.realpath(os.path.join(os.getcwd(), target))
    if inside(path, repo) and not (ws and inside(path, ws)):
        print("refused: " + path + " is in the repository, which this run may read but not "
              "write (workspace_mode: repo)", file=sys.stderr)
        sys.exit(2)
"""


def _needs_settings(runner: RunnerBlock) -> bool:
    return bool(runner.settings) or runner.workspace_mode == "repo"


def agent_flags(runner: RunnerBlock, case_dir: Path) -> list[str]:
    """The extra claude argv for ``runner`` (no files touched)."""
    argv: list[str] = []
    if runner.permission_mode:
        argv += ["--permission-mode", runner.permission_mode]
    case_dir = case_dir.absolute()  # claude runs in the workspace: no relative paths
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


def absolute_rule_path(path: str) -> str:
    """An absolute path in Claude Code's rule grammar (``//abs``; ``/abs`` would be read
    relative to the settings file)."""
    return "/" + path if path.startswith("/") and not path.startswith("//") else path


def settings_document(runner: RunnerBlock, repo: Path,
                      workspace: Path | None = None) -> dict[str, Any]:
    """The settings file's content: repo-mode rules, then ``runner.settings`` over them
    (mappings merged, lists extended, scalars replaced)."""
    doc: dict[str, Any] = {}
    if runner.workspace_mode == "repo":
        root = repo.resolve()
        ws = workspace.resolve() if workspace is not None else None
        doc["permissions"] = {
            "additionalDirectories": [str(root)],
            "deny": [*repo_write_rules(root, ws),
                     *(f"Bash({cmd}*)" for cmd in _REPO_WRITE_COMMANDS)],
        }
        guard = [sys.executable, "-S", "-c", REPO_GUARD, str(root), str(ws or "")]
        doc["hooks"] = {"PreToolUse": [{"matcher": WRITE_TOOLS, "hooks": [
            {"type": "command", "command": shlex.join(guard)}]}]}
    return _merge(doc, dict(runner.settings))


def repo_write_rules(root: Path, workspace: Path | None) -> list[str]:
    """``Edit`` deny rules keeping the agent from writing in ``root`` (absolute, resolved):
    the whole tree, or, when ``workspace`` lies inside it, every existing entry beside the
    path from ``root`` down to the workspace (a directory's rule covers what is below it)."""
    if workspace == root:
        return []  # (never the case: a workspace is a case's own folder)
    if workspace is None or not workspace.is_relative_to(root):
        return [f"Edit({absolute_rule_path(str(root))}/**)"]
    rules: list[str] = []
    level = root
    for part in workspace.relative_to(root).parts:
        try:
            names = sorted(p.name for p in level.iterdir() if p.name != part)
        except OSError:
            names = []
        rules += [f"Edit({absolute_rule_path(str(level / _glob_escape(n)))})" for n in names]
        level = level / part
    return rules


def _glob_escape(name: str) -> str:
    """A file name as a literal in a gitignore-style pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in name)


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


#: entries of a plugin folder never copied
_SKIPPED = (".git", "__pycache__")


def plugin_tree_problem(root: Path) -> str | None:
    """What makes the plugin folder ``root`` uncopyable, or None. Only folders and regular
    files are copied: a symbolic link anywhere inside (which could name a file outside the
    folder, or loop) and a FIFO or device (which would block or never end) are refused, so
    the copy never reads outside the folder the config named."""
    if not root.is_dir():
        return f"{root} is not a folder"
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        for name in sorted([*dirs, *files]):
            path = Path(top) / name
            try:
                mode = path.lstat().st_mode
            except OSError as exc:
                return f"{path}: {exc.strerror}"
            if stat.S_ISLNK(mode):
                return (f"{path} is a symbolic link (to {os.readlink(path)}); plugin folders "
                        "are copied without following links")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                return f"{path} is neither a folder nor a regular file"
    return None


def check_plugin_dirs(runner: RunnerBlock, config_dir: Path) -> None:
    """Every ``plugin_dirs`` folder copyable (:func:`plugin_tree_problem`), checked once
    before any cell runs: a ConfigError (exit 2), never an errored cell per cell."""
    for i, entry in enumerate(runner.plugin_dirs):
        problem = plugin_tree_problem((config_dir / entry).resolve())
        if problem:
            raise ConfigError(problem, path=f"runner.plugin_dirs[{i}]",
                              hint="replace the link by the file (or folder) it names")


def _copy_plain_tree(source: Path, dest: Path) -> None:
    """Copy folders and regular files only, never following a link (a link, FIFO or
    device met on the way — one added after the check — is a ConfigError)."""
    problem = plugin_tree_problem(source)
    if problem:
        raise ConfigError(problem, path="runner.plugin_dirs")
    for top, dirs, files in os.walk(source, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        target = dest / Path(top).relative_to(source)
        make_dirs(target)
        for name in files:
            fd = open_regular(str(Path(top) / name), os.O_RDONLY, nofollow=True)
            with os.fdopen(fd, "rb") as src, open(create_file(target / name), "wb") as out:
                shutil.copyfileobj(src, out)
                # the source's bits (a script stays executable), never beyond the runs mode
                os.fchmod(out.fileno(), limit(stat.S_IMODE(os.fstat(src.fileno()).st_mode)))


def stage_agent_files(runner: RunnerBlock, config_dir: Path, case_dir: Path,
                      workspace: Path) -> None:
    """Copy the plugins into the workspace and write the settings file, if any."""
    for entry in runner.plugin_dirs:
        source = (config_dir / entry).resolve()
        dest = workspace / STAGED / source.name
        if not dest.exists():
            make_dirs(dest.parent)
            _copy_plain_tree(source, dest)
    if _needs_settings(runner):
        doc = settings_document(runner, Path.cwd(), workspace)
        with open(create_file(case_dir / SETTINGS_FILE), "w", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, indent=2))
