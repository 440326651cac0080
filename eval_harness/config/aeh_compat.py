"""agent-eval-harness eval.yaml → this tool's schema, before validation.

Every key agent-eval-harness (opendatahub-io/agent-eval-harness, ``agent_eval/config.py``)
accepts is either given its meaning here or refused with a ConfigError (exit 2) naming the
key and what to do; nothing is accepted and ignored. The table of refusals is
:data:`UNSUPPORTED`; docs/migrating-from-agent-eval-harness.md lists both.

Translations (each fires only on that tool's shape, so this tool's own configs pass through):

- no ``name``: derived as it does — ``execution.skill`` (or top-level ``skill``), else
  ``eval/<dir>/eval.yaml`` → ``<dir>``, ``eval/<x>.yaml`` → ``<x>``, otherwise ``eval``;
- top-level ``skill`` (deprecated there) → ``execution.skill``; ``skill: null`` is dropped;
- ``execution.env`` values written ``$VAR`` → the caller's variable, omitted when unset;
- ``runner.env`` → merged into ``execution.env`` (the runner subprocess environment);
- ``permissions.allow`` / ``deny`` → ``--allowedTools`` / ``--disallowedTools`` (claude-code);
- ``outputs: [{path, schema}]`` → ``outputs.paths`` (directories of ``{workspace}``);
- ``thresholds: {judge: {min_pass_rate, min_mean}}`` → ``thresholds.judges``;
- judges: ``if`` → ``condition``; an LLM judge with no ``score_range`` and
  ``feedback_type: int`` / ``float`` gets its default scale ``[1, 5]``;
- ``traces`` is accepted: stdout, stderr and metrics are always recorded (a superset);
- a config without ``runner`` but with a skill or ``permissions`` runs ``claude-code``
  (that tool's default runner);
- ``EVAL_JUDGE_MODEL`` is ``models.judge`` when the config names none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval_harness.errors import ConfigError

DOC = "docs/migrating-from-agent-eval-harness.md"

#: key path (``*`` = any judge) -> what to do instead; refused with exit 2
UNSUPPORTED: dict[str, str] = {
    "execution.mode: batch": "one invocation for all cases is not supported; use mode: case",
    "execution.steps": "multi-step pipelines are not supported; run one step per eval "
                       "(or one script that runs the steps) with mode: case",
    "execution.parallelism": "pass --concurrency N on the command line",
    "execution.project_hooks: true": "project hooks are not carried into workspaces; set "
                                     "project_hooks: false (the behaviour here)",
    "runner.settings": "Claude Code settings files are not written; pass flags with "
                       "runner.extra_args",
    "runner.plugin_dirs": "plugins are not staged; pass --plugin-dir with runner.extra_args",
    "runner.system_prompt": "pass --append-system-prompt with runner.extra_args",
    "runner.effort": "make effort a matrix factor (effort: [high]) or pass --effort",
    "runner.permission_mode": "pass --permission-mode with runner.extra_args",
    "runner.workspace_mode": "repo mode is not supported; each case runs in its own workspace",
    "runner.type": "supported runner types: cli, http, openai, anthropic, claude-code, python",
    "models.hook": "AskUserQuestion answering is not supported; remove models.hook",
    "models.providers": "provider registries are not supported; point OPENAI_BASE_URL at "
                        "the gateway instead",
    "mlflow": "MLflow logging is not supported; remove the block and use anova.json / "
              "--export",
    "inputs.tools": "tool interception is not supported; remove inputs.tools",
    "hooks": "lifecycle hooks are not supported; wrap the command in a script instead",
    "generation": "case generation belongs to /eval-dataset; remove the block",
    "dataset.workspace": "use {workspace}: input.yaml is staged there; copy other files "
                         "from {config_dir} in the command",
    "outputs[].tool": "tool-call outputs are read from the reply's steps; remove the entry",
    "outputs[].batch_pattern": "batch collection is not supported (mode: case only)",
    "outputs[].types": "artifact types are not supported; remove the key",
    "judges[].llm_rubric": "write the rubric as `prompt` ending with {{ outputs.output }}",
    "judges[].builtin": "use this tool's built-ins (cost, latency, contains, ...) or a check",
    "judges[].context": "inline the files' text in the prompt or use prompt_file",
    "judges[].arguments": "write the values into the check body or prompt",
    "judges[].step": "multi-step pipelines are not supported",
    "judges[].examples": "few-shot review examples are not supported; remove the key",
    "judges[].agent": "agent judges are not supported; use an LLM or check judge",
    "judges[].provider_options": "provider options are not supported; remove the key",
    "thresholds.*.min_win_rate": "pairwise win-rate thresholds are not supported; use "
                                 "--reference and --fail-on-regression",
}

_OUR_THRESHOLD_KEYS = {"min_pass_rate", "min_mean", "pass_score", "judges"}
_RUNNER_UNSUPPORTED = ("settings", "plugin_dirs", "system_prompt", "effort",
                       "permission_mode", "workspace_mode")
_JUDGE_UNSUPPORTED = ("llm_rubric", "builtin", "context", "arguments", "step", "examples",
                      "agent", "provider_options")
_AEH_RUNNER_TYPES = ("cursor", "codex", "opencode", "responses-api", "openai-compatible",
                     "null")


def _refuse(key: str, what: str, file: str) -> ConfigError:
    return ConfigError(f"`{key}` (agent-eval-harness) is not supported: {what}",
                       path=key.split(":")[0].strip(), file=file, hint=f"see {DOC}")


def _empty(value: Any) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    if isinstance(value, Mapping):
        return all(_empty(v) for v in value.values())
    return False


def derive_name(raw: Mapping[str, Any], path: Path) -> str:
    """agent-eval-harness's eval name for a config that has no ``name``."""
    skill = (raw.get("execution") or {}).get("skill") if isinstance(raw.get("execution"), Mapping) else None
    for candidate in (skill, raw.get("skill")):
        if isinstance(candidate, str) and candidate.strip():
            return _sanitize(candidate)
    if path.name == "eval.yaml":
        return _sanitize(path.parent.name) if path.parent.parent.name == "eval" else "eval"
    return _sanitize(path.stem)


def _sanitize(text: str) -> str:
    out = "".join(c for c in text.lower().replace(" ", "-") if c.isalnum() or c in "._-")
    out = out.lstrip("._-")
    return out or "eval"


def _env(values: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """``$VAR`` values read from the caller (omitted when unset), as it does. Written as
    ``${VAR}`` so the value is resolved in memory only, never stored."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, str) and re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", value):
            if environ.get(value[1:]) is not None:
                out[key] = "${" + value[1:] + "}"
        else:
            out[key] = value if isinstance(value, str) else str(value)
    return out


def translate(raw: dict[str, Any], path: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``raw`` in this tool's schema (see module docstring); ConfigError on a key
    that cannot be honoured."""
    file = str(path)
    data = dict(raw)
    if "skill" in data:
        skill = data.pop("skill")
        if isinstance(skill, str) and skill.strip():
            ex = dict(data.get("execution") or {})
            ex.setdefault("skill", skill)
            data["execution"] = ex
    if not data.get("name"):
        data["name"] = derive_name(raw, path)
    for key in ("mlflow", "hooks", "generation"):
        if key in data:
            if not _empty(data[key]):
                raise _refuse(key, UNSUPPORTED[key], file)
            data.pop(key)
    if "inputs" in data and not _empty(data.pop("inputs")):
        raise _refuse("inputs.tools", UNSUPPORTED["inputs.tools"], file)
    if "traces" in data:
        data.pop("traces")  # superset recorded: stdout, stderr, metrics, tool calls
    permissions = data.pop("permissions", None)
    if isinstance(data.get("execution"), Mapping):
        data["execution"] = _execution(dict(data["execution"]), environ, file)
    if isinstance(data.get("runner"), Mapping):
        data["runner"] = _runner(dict(data["runner"]), data, environ, file)
    if isinstance(data.get("models"), Mapping):
        models = dict(data["models"])
        for key in ("hook", "providers"):
            if key in models:
                if not _empty(models[key]):
                    raise _refuse(f"models.{key}", UNSUPPORTED[f"models.{key}"], file)
                models.pop(key)
        data["models"] = models
    if isinstance(data.get("dataset"), Mapping):
        ds = dict(data["dataset"])
        if "workspace" in ds:
            if not _empty(ds["workspace"]):
                raise _refuse("dataset.workspace", UNSUPPORTED["dataset.workspace"], file)
            ds.pop("workspace")
        data["dataset"] = ds
    if isinstance(data.get("outputs"), list):
        data["outputs"] = _outputs(data["outputs"], file)
    if isinstance(data.get("judges"), list):
        data["judges"] = [_judge(j, i, file) if isinstance(j, Mapping) else j
                          for i, j in enumerate(data["judges"])]
    if isinstance(data.get("thresholds"), Mapping):
        data["thresholds"] = _thresholds(dict(data["thresholds"]), file)
    skill = (data.get("execution") or {}).get("skill") if isinstance(data.get("execution"), Mapping) else None
    if "runner" not in data and (skill or permissions is not None):
        data["runner"] = {"type": "claude-code"}  # that tool's default runner
    if permissions is not None:
        data = _permissions(data, permissions, file)
    judge_env = environ.get("EVAL_JUDGE_MODEL")
    if judge_env and data.get("judges"):  # its fallback: judge model > models.judge > env
        models = dict(data.get("models") or {})
        if not models.get("judge"):
            models["judge"] = judge_env
            data["models"] = models
    return data


def _execution(ex: dict[str, Any], environ: Mapping[str, str], file: str) -> dict[str, Any]:
    if ex.get("mode") == "batch":
        raise _refuse("execution.mode: batch", UNSUPPORTED["execution.mode: batch"], file)
    if "steps" in ex:
        if ex["steps"]:
            raise _refuse("execution.steps", UNSUPPORTED["execution.steps"], file)
        ex.pop("steps")
    if "parallelism" in ex:
        if ex["parallelism"] is not None:
            raise _refuse("execution.parallelism", UNSUPPORTED["execution.parallelism"], file)
        ex.pop("parallelism")
    if "project_hooks" in ex:
        if ex["project_hooks"] is not False:
            raise _refuse("execution.project_hooks: true",
                          UNSUPPORTED["execution.project_hooks: true"], file)
        ex.pop("project_hooks")
    if isinstance(ex.get("env"), Mapping):
        ex["env"] = _env(ex["env"], environ)
    if ex.get("timeout") is None:
        ex.pop("timeout", None)
    if ex.get("skill") in ("", None):
        ex.pop("skill", None)
    if ex.get("skill") and ex.get("prompt"):
        raise ConfigError("execution.skill and execution.prompt are mutually exclusive",
                          path="execution", file=file, hint="give one of them")
    return ex


def _runner(runner: dict[str, Any], data: dict[str, Any], environ: Mapping[str, str],
            file: str) -> dict[str, Any]:
    if runner.get("type") in _AEH_RUNNER_TYPES:
        raise _refuse("runner.type", f"`{runner['type']}`: " + UNSUPPORTED["runner.type"], file)
    for key in _RUNNER_UNSUPPORTED:
        if key in runner:
            if not _empty(runner[key]):
                raise _refuse(f"runner.{key}", UNSUPPORTED[f"runner.{key}"], file)
            runner.pop(key)
    if "env" in runner:
        env = runner.pop("env")
        if isinstance(env, Mapping):
            ex = dict(data.get("execution") or {})
            ex["env"] = {**_env(env, environ), **dict(ex.get("env") or {})}
            data["execution"] = ex
    return runner


def _permissions(data: dict[str, Any], perms: Any, file: str) -> dict[str, Any]:
    if not isinstance(perms, Mapping):
        raise ConfigError("permissions must be a mapping with allow / deny lists",
                          path="permissions", file=file, hint=f"see {DOC}")
    allow = [str(p) for p in perms.get("allow") or []]
    deny = [str(p) for p in perms.get("deny") or []]
    extra = set(perms) - {"allow", "deny"}
    if extra:
        raise _refuse(f"permissions.{sorted(extra)[0]}", "only allow and deny are read", file)
    if not allow and not deny:
        return data
    runner = dict(data.get("runner") or {})
    if runner.get("type") != "claude-code":
        raise _refuse("permissions", "tool permissions apply to the claude-code runner only; "
                      "remove the block for other runners", file)
    args = list(runner.get("extra_args") or [])
    if allow:
        args += ["--allowedTools", *allow]
    if deny:
        args += ["--disallowedTools", *deny]
    runner["extra_args"] = args
    data["runner"] = runner
    return data


def _outputs(entries: list[Any], file: str) -> dict[str, Any]:
    paths: list[str] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise ConfigError("each outputs entry must be a mapping {path, schema}",
                              path=f"outputs[{i}]", file=file, hint=f"see {DOC}")
        for key in ("tool", "batch_pattern", "types"):
            if not _empty(entry.get(key)):
                raise _refuse(f"outputs[].{key}", UNSUPPORTED[f"outputs[].{key}"], file)
        unknown = set(entry) - {"path", "schema", "tool", "batch_pattern", "types"}
        if unknown:
            raise ConfigError(f"unknown key `{sorted(unknown)[0]}`", path=f"outputs[{i}]",
                              file=file, hint="write {path, schema}")
        p = str(entry.get("path") or "").strip().rstrip("/")
        if not p or p == "." or ".." in Path(p).parts or Path(p).is_absolute():
            raise ConfigError("outputs[].path must be a named subdirectory of the workspace",
                              path=f"outputs[{i}].path", file=file, hint="e.g. path: output")
        paths.append(p)
    return {"paths": paths}


def _judge(judge: Mapping[str, Any], i: int, file: str) -> dict[str, Any]:
    out = dict(judge)
    for key in _JUDGE_UNSUPPORTED:
        if key in out:
            if not _empty(out[key]):
                raise _refuse(f"judges[].{key}", UNSUPPORTED[f"judges[].{key}"], file)
            out.pop(key)
    if "if" in out:
        cond = out.pop("if")
        if not _empty(cond):
            out["condition"] = cond
    ft = out.get("feedback_type")
    if ft in ("", None):
        out.pop("feedback_type", None)
    elif ft not in ("bool", "int", "float"):
        raise ConfigError(f"unsupported feedback_type {ft!r}", path=f"judges[{i}].feedback_type",
                          file=file, hint="use bool, int or float")
    is_llm = any(out.get(k) for k in ("prompt", "prompt_file"))
    if is_llm and out.get("score_range") is None and out.get("feedback_type") in ("int", "float") \
            and out.get("name") != "pairwise":
        out["score_range"] = [1, 5]  # its unenforced default scale
    return out


def _thresholds(th: dict[str, Any], file: str) -> dict[str, Any]:
    judges = dict(th.get("judges") or {})
    for key in list(th):
        if key in _OUR_THRESHOLD_KEYS:
            continue
        spec = th.pop(key)
        if isinstance(spec, Mapping):
            spec = dict(spec)
            if "min_win_rate" in spec:
                raise _refuse("thresholds.*.min_win_rate",
                              UNSUPPORTED["thresholds.*.min_win_rate"], file)
            judges[str(key)] = spec
        else:
            th[key] = spec  # let validation name it
    if judges:
        th["judges"] = judges
    return th

