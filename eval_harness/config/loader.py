"""Load eval.yaml: safe YAML, ``extends``, ``${VAR}`` interpolation, typed validation.

Every error becomes a :class:`ConfigError` naming the file, the key path, the line where
known, and a hint.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from eval_harness._util import redact
from eval_harness.config.defaults import apply_defaults
from eval_harness.config.dialects import Dialect, registered_dialects, translate_dialects
from eval_harness.config.envvars import interpolate
from eval_harness.config.extends import Origins, load_with_extends
from eval_harness.config.judge_options import BUILTIN_OPTIONS, options_hint
from eval_harness.config.models import EvalConfig
from eval_harness.config.secrets_lint import literal_secrets
from eval_harness.config.yamlio import KeyPath, format_path
from eval_harness.errors import ConfigError

_LOG = logging.getLogger("eval_harness.config")


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config plus what the rest of the tool needs to know about its source."""

    config: EvalConfig
    raw: dict[str, Any]  # merged, NOT interpolated: safe to print, digest and write
    path: Path
    origins: Origins
    warnings: tuple[str, ...] = ()  # load-time warnings (literal secrets), already logged
    #: the dialects that translated the file (``dialect_name``; empty: this tool's own keys)
    dialects: tuple[str, ...] = ()

    @property
    def base_dir(self) -> Path:
        """Directory of the top config file; relative paths resolve against it."""
        return self.path.parent


_HINTS: dict[str, str] = {
    "matrix": "write `matrix:` followed by an indented `factors:` mapping",
    "matrix.factors": "write name: [a, b]",
    "matrix.replications": "write replications: 3 (an integer >= 1, not a boolean)",
    "matrix.analysis": "write `analysis:` followed by indented keys such as correction: holm",
    "matrix.analysis.correction": "use a string: holm, bh, fdr_bh or none",
    "matrix.analysis.per_judge": "write per_judge: true or per_judge: false (unquoted)",
    "matrix.analysis.method": "use auto (default: rm when complete, else mixed), rm, mixed or lmm",
    "matrix.analysis.ddf": "use kenward-roger (default) or satterthwaite",
    "matrix.analysis.pass_rule": "use requirements (default: every boolean judge true and "
                                 "the composite >= pass_mark), composite (the weighted "
                                 "average alone) or aeh (agent-eval-harness's rule)",
    "judges": "each judge needs `name` and one kind field (check, prompt, a built-in...)",
    "runner.type": "one of cli, http, openai, anthropic, claude-code, python",
    **{f"judges.{kind}": options_hint(kind) for kind in BUILTIN_OPTIONS},
}


def _hint_for(path: KeyPath, err_type: str, model: type[BaseModel], bad_key: str | None) -> str:
    if err_type == "extra_forbidden" and bad_key is not None:
        known = _known_keys(model, path[:-1])
        close = difflib.get_close_matches(bad_key, known, n=1)
        if close:
            return f"did you mean `{close[0]}`? (`orchestrate schema` lists every key)"
        return "remove it; `orchestrate schema` lists every key"
    text = format_path(path)
    generic = "".join(f".{p}" if isinstance(p, str) else "" for p in path).lstrip(".")
    for key in (text, generic):
        while key:
            if key in _HINTS:
                return _HINTS[key]
            key = key.rpartition(".")[0]
    return "see docs/config.md"


def _known_keys(model: type[BaseModel], path: KeyPath) -> list[str]:
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        annotation = fields[part].annotation
        current = _first_model(annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", {})
    return [f.alias or name for name, f in fields.items()]


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def validation_to_config_error(
    exc: ValidationError, origins: Mapping[KeyPath, tuple[str, int]], default_file: str,
    model: type[BaseModel] = EvalConfig, prefix: KeyPath = (),
) -> ConfigError:
    """Turn the first pydantic error into one clear ConfigError (key path, line, hint)."""
    # An unknown key usually explains the rest (a misspelt required key), so name it first.
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    first = errors[0]
    loc: KeyPath = (*prefix, *(p for p in first["loc"] if isinstance(p, (str, int))))
    err_type = first["type"]
    bad_key = str(loc[-1]) if err_type == "extra_forbidden" and loc else None
    msg = first["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err_type == "extra_forbidden":
        msg = f"unknown key `{bad_key}`"
    elif err_type == "missing":
        msg = f"required key `{loc[-1]}` is missing"
    elif "input" in first and err_type not in ("value_error",):
        shown = repr(first["input"])
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg = f"{msg} (got {shown})"
    origin = None
    for depth in range(len(loc), -1, -1):
        origin = origins.get(loc[:depth])
        if origin:
            break
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return ConfigError(
        msg + more,
        path=format_path(loc),
        file=origin[0] if origin else default_file,
        line=origin[1] if origin else None,
        hint=_hint_for(loc, err_type, model, bad_key),
    )


def _strip_for_validation(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "extends"}


def load_config(
    path: str | Path, env: Mapping[str, str] | None = None, *, strict: bool = True,
    overrides: Mapping[str, Any] | None = None, dialects: Sequence[Dialect] | None = None,
) -> LoadedConfig:
    """Load and validate ``path``.

    ``strict=False`` (used by ``--analyze-only``) still validates the whole file but
    tolerates a missing ``${VAR}`` (left as written), since analysis needs no secrets.
    ``dialects``: the translators applied before this tool's defaults and validation
    (:mod:`eval_harness.config.dialects`); None: the registered ones.
    """
    file = Path(path)
    if not file.exists():
        raise ConfigError("config file not found", file=str(file), hint="pass --config PATH")
    merged, origins = load_with_extends(file)
    if overrides:
        from eval_harness.config.extends import deep_merge

        merged = deep_merge(merged, dict(overrides))
    environ = os.environ if env is None else env
    _keys_by_reference(merged, origins, str(file))
    chosen = registered_dialects() if dialects is None else tuple(dialects)
    # other tools' keys -> ours
    merged, claimed = translate_dialects(merged, file, environ, chosen)
    merged = apply_defaults(merged, file)
    if strict:
        resolved = interpolate(merged, environ, lines=origins)
    else:
        resolved = interpolate(merged, _Lenient(environ), lines=origins)
    try:
        config = EvalConfig.model_validate(_strip_for_validation(resolved))
    except ValidationError as exc:
        raise validation_to_config_error(exc, origins, str(file)) from None
    # masked in all output from now (the CLI registers the environment's too; the Python
    # API reaches here without the CLI)
    redact.register(redact.config_secrets(merged, environ) + redact.env_secrets(environ))
    warnings = tuple(literal_secrets(merged))
    for warning in warnings:  # on stderr through logging's last-resort handler by default
        _LOG.warning("warning: %s", warning)
    return LoadedConfig(config=config, raw=merged, path=file.resolve(), origins=origins,
                        warnings=warnings, dialects=claimed)


_VAR_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$")


def _keys_by_reference(merged: Mapping[str, Any], origins: Any, file: str) -> None:
    """Judge keys (``judges[i].api_key``, ``models.judge_api_key``) must be ``${VAR}``
    references: a literal key would be stored in the config and every run's record."""
    places: list[tuple[KeyPath, Any]] = []
    models = merged.get("models")
    if isinstance(models, Mapping) and "judge_api_key" in models:
        places.append((("models", "judge_api_key"), models["judge_api_key"]))
    judges = merged.get("judges")
    for i, judge in enumerate(judges if isinstance(judges, list) else []):  # else: validation
        if isinstance(judge, Mapping) and "api_key" in judge:
            places.append((("judges", i, "api_key"), judge["api_key"]))
    for path, value in places:
        if value is not None and not (isinstance(value, str) and _VAR_REF.match(value)):
            where = origins.get(path) if isinstance(origins, Mapping) else None
            raise ConfigError("a judge key must be an environment reference, not the key "
                              "itself", path=format_path(path),
                              file=where[0] if where else file,
                              line=where[1] if where else None,
                              hint="write api_key: ${JUDGE_API_KEY} and export the variable")


class _Lenient(dict):  # type: ignore[type-arg]
    """Environment view that leaves unknown variables as written."""

    def __init__(self, base: Mapping[str, str]) -> None:
        super().__init__(base)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        value = super().get(key)
        return value if value is not None else "${" + key + "}"
