"""Per-condition effective config (variant ``set`` overrides) and its digest.

The digest keys resume: a cell is skipped only when a complete record with the same
(condition_id, replication, case_id, config_digest) exists. It covers what changes an
answer — runner, execution prompt/arguments/env, models, outputs, the condition's levels
and its variant overrides — computed on the *raw* config (``${VAR}`` as written, so rotating
a key does not force a rerun) and excluding runtime knobs (timeouts, retries, budgets,
exit-code lists), judges and thresholds (judges can be re-scored without re-running). The
content of the agent's files (:mod:`eval_harness.matrix.fingerprint`) is part of it too.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from eval_harness.config.loader import LoadedConfig, validation_to_config_error
from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError
from eval_harness.matrix.builder import Condition

RUNTIME_KNOBS = ("timeout", "kill_grace", "retries", "max_budget_usd", "transient_exit_codes",
                 "quota_exit_codes", "max_spend", "max_tokens_per_cell", "max_cost_per_cell",
                 "executor", "ray_address", "runs_mode")
DIGEST_BLOCKS = ("runner", "execution", "models", "outputs")


def set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in a nested dict, creating mappings on the way."""
    parts = dotted.split(".")
    node = target
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``data`` with every dotted override applied."""
    out = copy.deepcopy(dict(data))
    for dotted, value in overrides.items():
        set_dotted(out, dotted, value)
    return out


def effective_config(loaded: LoadedConfig, condition: Condition,
                     env: Mapping[str, str] | None = None) -> EvalConfig:
    """The validated config a condition runs with (base config if it has no variant)."""
    if not condition.config_overrides:
        return loaded.config
    from eval_harness.config.envvars import interpolate

    raw = apply_overrides(loaded.raw, condition.config_overrides)
    resolved = interpolate(raw, env)
    try:
        return EvalConfig.model_validate(resolved)
    except ValidationError as exc:
        err = validation_to_config_error(exc, {}, "")
        raise ConfigError(
            f"variant of condition {condition.label} makes an invalid config: {err.key_path}: "
            f"{str(err.message).split(': ', 1)[-1]}",
            path="matrix.factors", file=str(loaded.path), hint=err.hint,
        ) from None


def config_digest(raw: Mapping[str, Any], condition: Condition,
                  files: Mapping[str, str] | None = None) -> str:
    """16-hex digest of what changes a condition's answers (see module doc); ``files``
    ({path: content hash}, :mod:`eval_harness.matrix.fingerprint`) is the agent's code."""
    # only the digested blocks are copied (and only when overrides must be merged into
    # them): a deep copy of the whole raw config per condition was most of --dry-run's
    # expansion time at 1,000 conditions; the payload is the same
    data: Mapping[str, Any] = {k: raw[k] for k in DIGEST_BLOCKS if k in raw}
    if condition.config_overrides:
        data = apply_overrides(data, condition.config_overrides)
    picked: dict[str, Any] = {k: data.get(k) for k in DIGEST_BLOCKS}
    if isinstance(picked.get("execution"), dict):
        picked["execution"] = {k: v for k, v in picked["execution"].items()
                               if k not in RUNTIME_KNOBS}
    picked["levels"] = condition.levels
    picked["overrides"] = condition.config_overrides
    if files:  # only when there are files, so digests without any stay as they were
        picked["files"] = dict(files)
    payload = json.dumps(picked, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
