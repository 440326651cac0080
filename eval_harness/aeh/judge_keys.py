"""agent-eval-harness ``judges`` and ``thresholds`` → this tool's keys.

- ``if`` → ``condition``; ``llm_rubric`` → ``prompt`` (it wins over ``prompt`` /
  ``prompt_file``, as there; the answer is appended when the rubric does not show it);
- ``arguments`` and ``context`` keep their names (see :class:`JudgeBlock`); a ``context``
  file is looked up beside the config, then in the working directory (that tool's
  project root); a missing one is an error (there it is skipped silently);
- an LLM judge with ``feedback_type: int`` / ``float`` and no ``score_range`` gets its
  default scale ``[1, 5]``;
- ``thresholds: {judge: {min_pass_rate, min_mean, max_error_rate, min_win_rate}}`` →
  ``thresholds.judges``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval_harness.aeh.builtin_judges import KINDS, LLM_PROMPTS, PERSISTED_MODULE
from eval_harness.aeh.runner_keys import empty, refuse
from eval_harness.errors import ConfigError

_JUDGE_REFUSED = ("examples", "agent", "provider_options")
_OUR_THRESHOLD_KEYS = {"min_pass_rate", "min_mean", "pass_score", "judges"}


def translate_judges(data: dict[str, Any], path: Path, unsupported: Mapping[str, str]) -> None:
    """Rewrite ``data["judges"]`` and ``data["thresholds"]`` in place."""
    if isinstance(data.get("judges"), list):
        data["judges"] = [_judge(j, i, path, unsupported) if isinstance(j, Mapping) else j
                          for i, j in enumerate(data["judges"])]
    if isinstance(data.get("thresholds"), Mapping):
        data["thresholds"] = _thresholds(dict(data["thresholds"]))
    elif "thresholds" in data and empty(data["thresholds"]):
        data.pop("thresholds")


def _judge(judge: Mapping[str, Any], i: int, path: Path,
           unsupported: Mapping[str, str]) -> dict[str, Any]:
    file = str(path)
    out = dict(judge)
    for key in _JUDGE_REFUSED:
        if key in out:
            if not empty(out[key]):
                raise refuse(f"judges[].{key}", unsupported[f"judges[].{key}"], file)
            out.pop(key)
    if "builtin" in out:
        _builtin(out, i, file)
    if "if" in out:
        cond = out.pop("if")
        if not empty(cond):
            out["condition"] = cond
    rubric = out.pop("llm_rubric", None)
    if not empty(rubric):
        out.pop("prompt", None)
        out.pop("prompt_file", None)
        out["prompt"] = str(rubric)
    for key in ("prompt", "prompt_file", "check", "module", "function", "description",
                "model"):
        if out.get(key) == "":
            out.pop(key)
    if out.get("step") == "":
        out.pop("step")
    if "arguments" in out and out["arguments"] is None:
        out.pop("arguments")
    if "context" in out:
        out["context"] = _context(out.pop("context"), i, path)
        if not out["context"]:
            out.pop("context")
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


def _builtin(out: dict[str, Any], i: int, file: str) -> None:
    """Its builtin judge library (:mod:`eval_harness.aeh.builtin_judges`): a python one
    becomes a module judge, an LLM one a pass/fail prompt judge."""
    name = out.pop("builtin")
    if empty(name):
        return
    where = f"judges[{i}].builtin"
    if not isinstance(name, str) or name not in KINDS:
        raise ConfigError(f"unknown builtin judge {name!r}", path=where, file=file,
                          hint="builtins: " + ", ".join(sorted(KINDS)))
    if KINDS[name] == "python":
        out["module"], out["function"] = PERSISTED_MODULE, name.split("/")[1]
        return
    if out.get("feedback_type") not in (None, "", "bool") or out.get("score_range"):
        raise ConfigError(f"builtin LLM judge {name!r} is pass/fail: feedback_type and "
                          "score_range have no meaning", path=f"judges[{i}]", file=file,
                          hint="remove feedback_type / score_range")
    out["prompt"] = LLM_PROMPTS[name]
    out.setdefault("arguments", {})
    out["feedback_type"] = "bool"


def _context(entries: Any, i: int, path: Path) -> list[str]:
    where = f"judges[{i}].context"
    if entries is None:
        return []
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ConfigError("context must be a list of file paths", path=where, file=str(path),
                          hint="context: [docs/style.md]")
    out: list[str] = []
    for entry in entries:
        for base in (path.parent, Path.cwd()):
            if (base / entry).is_file():
                out.append(entry if base == path.parent else str((base / entry).resolve()))
                break
        else:
            raise ConfigError(f"context file `{entry}` not found", path=where, file=str(path),
                              hint="paths are relative to the config file or the working "
                                   "directory")
    return out


def _thresholds(th: dict[str, Any]) -> dict[str, Any]:
    judges = dict(th.get("judges") or {})
    for key in list(th):
        if key in _OUR_THRESHOLD_KEYS:
            continue
        spec = th.pop(key)
        if isinstance(spec, Mapping):
            judges[str(key)] = dict(spec)
        else:
            th[key] = spec  # let validation name it
    if judges:
        th["judges"] = judges
    return th
