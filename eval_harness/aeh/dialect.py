"""agent-eval-harness eval.yaml → this tool's schema, before validation.

Every key agent-eval-harness (opendatahub-io/agent-eval-harness, ``agent_eval/config.py``)
accepts is either given its meaning here or refused with a ConfigError (exit 2) naming the
key and what to do; nothing is accepted and ignored. The table of refusals is
:data:`UNSUPPORTED`; docs/migrating-from-agent-eval-harness.md lists both, key by key.

The eval name (the ``runs/<name>/`` folder) is :func:`eval_name`, that tool's rule.
Runner, permission and execution keys are translated in :mod:`eval_harness.aeh.runner_keys`;
judges, thresholds and reward in :mod:`eval_harness.aeh.judge_keys`. Each translation
fires only on that tool's shape, so this tool's own configs pass through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval_harness.aeh.judge_keys import translate_judges
from eval_harness.aeh.runner_keys import (
    DOC,
    empty,
    refuse,
    translate_execution,
    translate_runner,
)
from eval_harness.errors import ConfigError

#: key path (``*`` = any judge) -> what to do instead; refused with exit 2
UNSUPPORTED: dict[str, str] = {
    "execution.mode: batch": "one invocation for all cases is not supported; use mode: case",
    "execution.steps[].runner": "a step runs with the eval's runner; per-step runners are "
                                "not supported (split the eval)",
    "execution.project_hooks: true": "project hooks are not carried into workspaces; set "
                                     "project_hooks: false (the behaviour here)",
    "runner.type": "supported runner types: cli, http, openai, anthropic, claude-code, python",
    "models.hook": "AskUserQuestion answering is not supported; remove models.hook",
    "models.providers": "provider registries are not supported; point OPENAI_BASE_URL at "
                        "the gateway instead",
    "inputs.tools": "tool interception is not supported; remove inputs.tools",
    "hooks.before_step": "per-step hooks are not run; use before_each / after_each",
    "hooks.before_report": "report hooks are not run; run the command after orchestrate",
    "outputs[].tool": "tool-call outputs are read from the reply's steps; remove the entry",
    "outputs[].batch_pattern": "batch collection is not supported (mode: case only)",
    "judges[].examples": "few-shot review examples are not supported; remove the key",
    "judges[].agent": "agent judges are not supported; use an LLM or check judge",
    "judges[].provider_options": "provider options are not supported; remove the key",
}

_HOOK_PHASES = ("before_all", "before_each", "after_each", "before_scoring", "after_all")


def eval_name(raw: Mapping[str, Any], path: Path) -> str:
    """That tool's ``EvalConfig.eval_name()``: the skill under test first (as written), then
    ``name`` (lower-cased, spaces to ``-``, only letters, digits and ``._-`` kept; skipped
    when it equals the file's stem; a control character is an error here), then the path: ``eval/<dir>/eval.yaml`` → ``<dir>``,
    another ``eval.yaml`` → ``eval``, ``<x>.yaml`` → ``<x>``."""
    ex = raw.get("execution")
    skill = ex.get("skill") if isinstance(ex, Mapping) else None
    for candidate, key in ((skill, "execution.skill"), (raw.get("skill"), "skill")):
        if isinstance(candidate, str) and candidate:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", candidate):
                raise ConfigError(f"skill {candidate!r} cannot name the runs folder (the eval "
                                  "name is the skill, as in agent-eval-harness)", path=key,
                                  file=str(path), hint="use letters, digits, `.`, `_`, `-`")
            return candidate
    name = raw.get("name")
    if isinstance(name, str) and any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        # refused rather than silently cleaned (that tool would drop the character)
        raise ConfigError("the eval name has a control character (a newline, ESC, ...)",
                          path="name", file=str(path), hint="write it on one line, printable")
    if isinstance(name, str) and name and name != path.stem:
        cleaned = "".join(c for c in name.lower().replace(" ", "-") if c.isalnum() or c in "._-")
        if cleaned and cleaned not in (".", ".."):
            return cleaned
    if path.name == "eval.yaml":
        return path.parent.name if path.parent.parent.name == "eval" else "eval"
    return path.stem


def translate(raw: dict[str, Any], path: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``raw`` in this tool's schema (see module docstring); ConfigError on a key
    that cannot be honoured."""
    file = str(path)
    data = dict(raw)
    data["name"] = eval_name(raw, path)
    if "skill" in data:
        skill = data.pop("skill")
        if isinstance(skill, str) and skill.strip():
            ex = dict(data.get("execution") or {})
            if not (ex.get("skill") or "").strip():
                ex["skill"] = skill
            data["execution"] = ex
    if "mlflow" in data:
        block = data.pop("mlflow")
        if block is not None:  # its rule: the block's presence turns logging on
            if not isinstance(block, Mapping):
                raise ConfigError("mlflow must be a mapping", path="mlflow", file=file,
                                  hint="mlflow: {experiment: NAME, tracking_uri: URI}")
            data["mlflow"] = {k: v for k, v in block.items() if v is not None}
    _metadata(data, file)
    if "hooks" in data:
        data["hooks"] = _hooks(data.pop("hooks"), file)
    if "inputs" in data and not empty(data.pop("inputs")):
        raise refuse("inputs.tools", UNSUPPORTED["inputs.tools"], file)
    if "traces" in data:
        data.pop("traces")  # superset recorded: stdout, stderr, metrics, tool calls
    permissions = data.pop("permissions", None)
    if isinstance(data.get("execution"), Mapping):
        data["execution"] = translate_execution(dict(data["execution"]), environ, file,
                                                UNSUPPORTED)
    data["runner"] = translate_runner(data.get("runner"), data, permissions, path, environ,
                                      UNSUPPORTED)
    if isinstance(data.get("models"), Mapping):
        models = dict(data["models"])
        for key in ("hook", "providers"):
            if key in models:
                if not empty(models[key]):
                    raise refuse(f"models.{key}", UNSUPPORTED[f"models.{key}"], file)
                models.pop(key)
        data["models"] = models
    if isinstance(data.get("dataset"), Mapping):
        ds = dict(data["dataset"])
        if "workspace" in ds and empty(ds["workspace"]):
            ds.pop("workspace")
        data["dataset"] = ds
    if isinstance(data.get("outputs"), list):
        data["outputs"], types = _outputs(data["outputs"], file)
        if types:  # artifact types: metadata for readers of the config, as there
            data["metadata"] = {**dict(data.get("metadata") or {}), "output_types": types}
    translate_judges(data, path, UNSUPPORTED)
    judge_env = environ.get("EVAL_JUDGE_MODEL")
    if judge_env and data.get("judges"):  # its fallback: judge model > models.judge > env
        models = dict(data.get("models") or {})
        if not models.get("judge"):
            models["judge"] = judge_env
            data["models"] = models
    return data


_STRATEGIES = ("skill", "synthetic", "from-traces")


def _metadata(data: dict[str, Any], file: str) -> None:
    """``generation`` (how its /eval-dataset sourced the cases) is checked by its rules and
    kept as metadata: ``strategy`` one of :data:`_STRATEGIES`, ``seeds`` only (and always)
    with ``synthetic``, each seed a ``category``, a ``count`` >= 1 and exactly one of
    ``builtin`` / ``prompt_file`` / ``prompt``."""
    if "generation" not in data:
        return
    gen = data.pop("generation")
    if empty(gen):
        return
    if not isinstance(gen, Mapping):
        raise ConfigError("generation must be a mapping", path="generation", file=file,
                          hint="generation: {strategy: synthetic, seeds: [...]}")
    strategy = gen.get("strategy") or "skill"
    seeds = gen.get("seeds") or []
    problem = None
    if strategy not in _STRATEGIES:
        problem = ("generation.strategy", f"strategy must be one of {', '.join(_STRATEGIES)}")
    elif not isinstance(seeds, list):
        problem = ("generation.seeds", "seeds must be a list")
    elif strategy == "synthetic" and not seeds:
        problem = ("generation.seeds", "strategy synthetic needs seeds")
    elif seeds and strategy != "synthetic":
        problem = ("generation.seeds", "seeds are only valid with strategy: synthetic")
    for i, seed in enumerate(seeds if problem is None else []):
        ok = (isinstance(seed, Mapping) and isinstance(seed.get("category"), str)
              and seed["category"] and isinstance(seed.get("count"), int)
              and not isinstance(seed["count"], bool) and seed["count"] >= 1
              and sum(bool(seed.get(k)) for k in ("builtin", "prompt_file", "prompt")) == 1)
        if not ok:
            problem = (f"generation.seeds[{i}]", "a seed needs category, count >= 1 and one "
                       "of builtin / prompt_file / prompt")
            break
    if problem:
        raise ConfigError(problem[1], path=problem[0], file=file, hint=f"see {DOC}")
    data["metadata"] = {**dict(data.get("metadata") or {}), "generation": dict(gen)}


def _hooks(block: Any, file: str) -> dict[str, Any] | None:
    if block is None:
        return None
    if not isinstance(block, Mapping):
        raise ConfigError("hooks must be a mapping of phase -> list of hooks", path="hooks",
                          file=file, hint="hooks: {before_all: [{command: ./setup.sh}]}")
    out: dict[str, Any] = {}
    for phase, entries in block.items():
        if empty(entries):
            continue
        if phase in ("before_step", "after_step"):
            raise refuse(f"hooks.{phase}", UNSUPPORTED["hooks.before_step"], file)
        if phase == "before_report":
            raise refuse("hooks.before_report", UNSUPPORTED["hooks.before_report"], file)
        if phase not in _HOOK_PHASES:
            raise ConfigError(f"unknown hook phase `{phase}`", path=f"hooks.{phase}", file=file,
                              hint="phases: " + ", ".join(_HOOK_PHASES))
        out[phase] = entries
    return out or None


def _outputs(entries: list[Any], file: str) -> tuple[dict[str, Any], dict[str, Any]]:
    paths: list[str] = []
    types: dict[str, Any] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise ConfigError("each outputs entry must be a mapping {path, schema}",
                              path=f"outputs[{i}]", file=file, hint=f"see {DOC}")
        for key in ("tool", "batch_pattern"):
            if not empty(entry.get(key)):
                raise refuse(f"outputs[].{key}", UNSUPPORTED[f"outputs[].{key}"], file)
        unknown = set(entry) - {"path", "schema", "tool", "batch_pattern", "types"}
        if unknown:
            raise ConfigError(f"unknown key `{sorted(unknown)[0]}`", path=f"outputs[{i}]",
                              file=file, hint="write {path, schema}")
        p = str(entry.get("path") or "").strip().rstrip("/")
        if not p or p == "." or ".." in Path(p).parts or Path(p).is_absolute():
            raise ConfigError("outputs[].path must be a named subdirectory of the workspace",
                              path=f"outputs[{i}].path", file=file, hint="e.g. path: output")
        paths.append(p)
        if not empty(entry.get("types")):
            if not isinstance(entry["types"], Mapping):
                raise ConfigError("outputs[].types must map a file name or glob to a type",
                                  path=f"outputs[{i}].types", file=file,
                                  hint="types: {'*.md': document}")
            types[p] = dict(entry["types"])
    return {"paths": paths}, types


def claims(raw: Mapping[str, Any], translated: Mapping[str, Any]) -> bool:
    """Whether ``raw`` is written in this dialect: translating it changed something beyond
    the default runner (this tool's own default too), so a config of this tool's own
    keys is never claimed."""
    before, after = dict(raw), dict(translated)
    if "runner" not in before and after.get("runner") == {"type": "claude-code"}:
        after.pop("runner")
    return before != after


#: how loaders name this dialect and tell its configs (:mod:`eval_harness.config.dialects`):
#: a config it claims gets agent-eval-harness's pass rule by default
setattr(translate, "dialect_name", "agent-eval-harness")  # noqa: B010
setattr(translate, "claims", claims)  # noqa: B010
