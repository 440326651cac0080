"""This tool's own defaults for keys a config may leave out, applied by the loader after
any dialect (:mod:`eval_harness.config.dialects`) and before validation.

- ``name``: the config file's stem (``eval.yaml`` names the eval after its folder);
- ``runner``: no block, or a block without ``type``, is ``claude-code``; a type-less block
  *with* a ``command`` is ``cli``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_RUNNER = "claude-code"


def default_runner(block: Any) -> Any:
    """The ``runner`` block with its ``type`` filled in (a copy; a non-mapping is returned
    as it is, for validation to name)."""
    if block is None:
        return {"type": DEFAULT_RUNNER}
    if not isinstance(block, Mapping):
        return block
    runner = dict(block)
    if runner.get("type") is None:
        runner["type"] = "cli" if runner.get("command") else DEFAULT_RUNNER
    return runner


def default_name(path: Path) -> str:
    """The eval name of a config that states none."""
    return path.parent.name if path.name == "eval.yaml" and path.parent.name else path.stem


def apply_defaults(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """A copy of ``raw`` with the defaults above filled in."""
    data = dict(raw)
    if data.get("name") is None:
        data["name"] = default_name(path)
    data["runner"] = default_runner(data.get("runner"))
    return data
