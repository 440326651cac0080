"""agent-eval-harness ``execution``, ``runner`` and ``permissions`` → this tool's keys.

- no ``runner`` block, or one without ``type``, is ``claude-code`` (that tool's default,
  and this tool's: :func:`eval_harness.config.defaults.default_runner`). One deviation: a
  type-less block *with* a ``command`` stays ``cli``, its meaning here (that tool would
  ignore the command and run Claude Code);
- ``runner.env`` is merged into ``execution.env``; ``$VAR`` values are read from the caller
  and omitted when unset, as there (written ``${VAR}`` so they are resolved in memory only);
- ``runner.effort`` / ``system_prompt`` / ``permission_mode`` / ``plugin_dirs`` /
  ``settings`` / ``workspace_mode`` keep their names (see
  :mod:`eval_harness.runner.claude_code` for the flags they become);
- ``permissions.allow`` / ``deny`` are compiled to Claude Code patterns by
  :func:`compile_permission_rules` into ``runner.allowed_tools`` / ``disallowed_tools``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval_harness.config.defaults import default_runner
from eval_harness.errors import ConfigError

DOC = "docs/migrating-from-agent-eval-harness.md"
#: tools whose permission rules take a path (gitignore syntax)
PATH_SCOPED_TOOLS = ("Read", "Edit", "Write", "Grep", "Glob")
_AEH_RUNNER_TYPES = ("cursor", "codex", "opencode", "responses-api", "openai-compatible",
                     "null")
_CLAUDE_ONLY = ("system_prompt", "permission_mode", "plugin_dirs", "settings")


def refuse(key: str, what: str, file: str) -> ConfigError:
    """The one-line refusal of an agent-eval-harness key (exit 2)."""
    return ConfigError(f"`{key}` (agent-eval-harness) is not supported: {what}",
                       path=key.split(":")[0].strip(), file=file, hint=f"see {DOC}")


def empty(value: Any) -> bool:
    """None, "", [], {} or a mapping of only empty values."""
    if value is None or value == "" or value == [] or value == {}:
        return True
    if isinstance(value, Mapping):
        return all(empty(v) for v in value.values())
    return False


def dollar_env(values: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """``$VAR`` values read from the caller (omitted when unset), as there. Written as
    ``${VAR}`` so the value is resolved in memory only, never stored."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, str) and re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", value):
            if environ.get(value[1:]) is not None:
                out[key] = "${" + value[1:] + "}"
        else:
            out[key] = value if isinstance(value, str) else str(value)
    return out


def compile_permission_rules(rules: Any, *, deny: bool, where: str, file: str) -> list[str]:
    """Claude Code permission patterns from a ``permissions.allow`` / ``deny`` list.

    A string is a tool name or a ready pattern, kept (a path-scoped ``Write(...)`` becomes
    ``Edit(...)``, see below). ``{path, tools}`` scopes file tools to a path: a directory
    (trailing ``/``) matches recursively (``dir/**``, gitignore syntax), a file verbatim; a
    relative path is relative to the workspace, an absolute one is written ``//abs`` (Claude
    Code reads ``/abs`` relative to the settings file); each listed file tool becomes
    ``Tool(pattern)``, ``Write`` as ``Edit``: Claude Code applies no ``Write(path)`` rule to
    the Write tool, while ``Edit`` rules govern every file-writing tool. ``Bash`` matches
    command strings, never paths, so it cannot be path-scoped: in a *deny* rule it adds
    ``Read`` and ``Edit`` (which also cover Claude Code's recognised shell file commands) so
    the answer key stays protected; in an allow rule it grants nothing. Duplicates are
    dropped, order kept."""
    if rules is None:
        return []
    if not isinstance(rules, list):
        raise ConfigError("must be a list of tool names or {path, tools} rules", path=where,
                          file=file, hint="deny: ['mcp__*', {path: eval/, tools: [Read]}]")
    out: list[str] = []
    for i, rule in enumerate(rules):
        if isinstance(rule, Mapping):
            path, tools = rule.get("path") or "", rule.get("tools") or []
            if not isinstance(path, str) or not isinstance(tools, list):
                raise ConfigError("a path rule is {path: DIR/ or FILE, tools: [Read, ...]}",
                                  path=f"{where}[{i}]", file=file, hint=f"see {DOC}")
            if not path:
                continue
            pattern = _rule_path(f"{path}**" if path.endswith("/") else path)
            chosen = [_WRITES_AS.get(t, t) for t in tools if t in PATH_SCOPED_TOOLS]
            if deny and "Bash" in tools:
                chosen += ["Read", "Edit"]
            candidates = [f"{tool}({pattern})" for tool in dict.fromkeys(chosen)]
        elif isinstance(rule, str):
            candidates = [_write_rule_as_edit(rule)]
        else:
            raise ConfigError("a rule is a tool name or {path, tools}", path=f"{where}[{i}]",
                              file=file, hint=f"see {DOC}")
        out += [c for c in candidates if c not in out]
    return out


#: the tool a path rule must name to govern a tool's writes (Claude Code 2.x)
_WRITES_AS = {"Write": "Edit"}


def _rule_path(path: str) -> str:
    """``path`` in Claude Code's rule grammar: ``//abs`` for an absolute path."""
    return "/" + path if path.startswith("/") and not path.startswith("//") else path


def _write_rule_as_edit(rule: str) -> str:
    """A ready ``Write(path)`` pattern as the ``Edit(path)`` rule that really applies."""
    m = re.fullmatch(r"Write\((.+)\)", rule.strip())
    return f"Edit({m.group(1)})" if m else rule


def translate_execution(ex: dict[str, Any], environ: Mapping[str, str], file: str,
                        unsupported: Mapping[str, str]) -> dict[str, Any]:
    """The ``execution`` block."""
    if ex.get("mode") == "batch":
        raise refuse("execution.mode: batch", unsupported["execution.mode: batch"], file)
    if "steps" in ex:
        if not ex["steps"]:
            ex.pop("steps")
        elif isinstance(ex["steps"], list):
            ex["steps"] = [_step(s, i, environ, file, unsupported) for i, s in enumerate(ex["steps"])]
    if ex.get("parallelism") is None:
        ex.pop("parallelism", None)
    if "project_hooks" in ex:
        if ex["project_hooks"] is not False:
            raise refuse("execution.project_hooks: true",
                         unsupported["execution.project_hooks: true"], file)
        ex.pop("project_hooks")
    if isinstance(ex.get("env"), Mapping):
        ex["env"] = dollar_env(ex["env"], environ)
    for key in ("timeout", "max_budget_usd", "mode"):
        if ex.get(key) is None:
            ex.pop(key, None)
    for key in ("skill", "prompt", "arguments"):
        if ex.get(key) == "":
            ex.pop(key)
    if (ex.get("skill") or "").strip() and (ex.get("prompt") or "").strip():
        raise ConfigError("execution.skill and execution.prompt are mutually exclusive",
                          path="execution", file=file, hint="give one of them")
    return ex


def _step(step: Any, i: int, environ: Mapping[str, str], file: str,
          unsupported: Mapping[str, str]) -> Any:
    """One ``execution.steps`` entry: ``$VAR`` env values as in ``execution.env``; a
    per-step ``runner`` is refused."""
    if not isinstance(step, Mapping):
        return step  # let validation name it
    out = {k: v for k, v in step.items() if v is not None and v != ""}
    if "runner" in out:
        if not empty(out["runner"]):
            raise refuse("execution.steps[].runner", unsupported["execution.steps[].runner"],
                         file)
        out.pop("runner")
    if isinstance(out.get("env"), Mapping):
        out["env"] = dollar_env(out["env"], environ)
    return out


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_runner_env(env: Any, file: str) -> None:
    """``runner.env`` (its key; merged into ``execution.env``) is a mapping of variable
    names to scalar values: anything else is refused here, under its own key path, rather
    than dropped or reported as ``execution.env``."""
    if env is None:
        return
    if not isinstance(env, Mapping):
        raise ConfigError(f"runner.env must be a mapping of variable names to values, got "
                          f"{type(env).__name__}", path="runner.env", file=file,
                          hint="write env: {NAME: value} (a value $VAR is read from your "
                               "environment)")
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.fullmatch(key):
            raise ConfigError(f"runner.env: {key!r} is not an environment variable name",
                              path="runner.env", file=file,
                              hint="letters, digits and _, not starting with a digit")
        if isinstance(value, (Mapping, list)) or value is None:
            raise ConfigError(f"runner.env.{key} must be a string (or a number), got "
                              f"{'null' if value is None else type(value).__name__}",
                              path=f"runner.env.{key}", file=file,
                              hint=f"write {key}: value, or {key}: $VAR to pass yours on")


def translate_runner(block: Any, data: dict[str, Any], permissions: Any, path: Path,
                     environ: Mapping[str, str], unsupported: Mapping[str, str]) -> Any:
    """The ``runner`` block, with that tool's default and the ``permissions`` block."""
    file = str(path)
    if block is not None and not isinstance(block, Mapping):
        return block  # let validation name it
    runner = default_runner({k: v for k, v in (block or {}).items() if v is not None})
    kind = runner["type"]
    if kind in _AEH_RUNNER_TYPES:
        raise refuse("runner.type", f"`{kind}`: " + unsupported["runner.type"], file)
    if "env" in runner:
        env = runner.pop("env")
        _check_runner_env(env, file)
        if isinstance(env, Mapping):
            ex = dict(data.get("execution") or {})
            ex["env"] = {**dollar_env(env, environ), **dict(ex.get("env") or {})}
            data["execution"] = ex
    for key in ("settings", "plugin_dirs", "system_prompt", "effort"):
        if key in runner and empty(runner[key]):
            runner.pop(key)
    if kind in ("openai", "anthropic") and "system_prompt" in runner:
        runner.setdefault("system", runner.pop("system_prompt"))
    if kind != "claude-code":
        present = [k for k in _CLAUDE_ONLY if k in runner]
        if present:
            raise ConfigError(f"runner.{present[0]} applies to the claude-code runner only",
                              path=f"runner.{present[0]}", file=file,
                              hint="remove it, or use type: claude-code")
    for i, entry in enumerate(runner.get("plugin_dirs") or []):
        where = f"runner.plugin_dirs[{i}]"
        if not isinstance(entry, str) or not (path.parent / entry).is_dir():
            raise ConfigError("plugin directory not found", path=where, file=file,
                              hint="paths are relative to the config file")
    if permissions is not None and not empty(permissions):
        _permissions(runner, permissions, file)
    return runner


def _permissions(runner: dict[str, Any], perms: Any, file: str) -> None:
    if not isinstance(perms, Mapping):
        raise ConfigError("permissions must be a mapping with allow / deny lists",
                          path="permissions", file=file, hint=f"see {DOC}")
    extra = set(perms) - {"allow", "deny"}
    if extra:
        raise refuse(f"permissions.{sorted(extra)[0]}", "only allow and deny are read", file)
    allow = compile_permission_rules(perms.get("allow"), deny=False,
                                     where="permissions.allow", file=file)
    deny = compile_permission_rules(perms.get("deny"), deny=True,
                                    where="permissions.deny", file=file)
    if not allow and not deny:
        return
    if runner.get("type") != "claude-code":
        raise refuse("permissions", "tool permissions apply to the claude-code runner only; "
                     "remove the block for other runners", file)
    runner["allowed_tools"] = [*runner.get("allowed_tools", []), *allow]
    runner["disallowed_tools"] = [*runner.get("disallowed_tools", []), *deny]
