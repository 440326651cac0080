"""The config a run used, recorded beside its run directories (``<runs>/<eval>/eval_config.json``).

``--analyze-only`` without ``--config`` used to fall back to the order in which levels were
found, so the reference condition — and with it every "improved" / "regressed" verdict —
could flip. Every run now records the merged config (``${VAR}`` as written, literal secrets
masked: :func:`~eval_harness.config.masking.mask_secrets`; read back verbatim, never
interpolated against the environment), and analysis without
``--config`` uses it: factor and level order, reference, judge specs and score ranges,
composite, thresholds and pass mark.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_harness._util.file_modes import make_dirs
from eval_harness._util.json_text import write_text_atomic
from eval_harness.config.loader import LoadedConfig
from eval_harness.config.masking import mask_secrets
from eval_harness.config.models import EvalConfig

RECORDED = "eval_config.json"
SCHEMA_VERSION = 1


def record_config(loaded: LoadedConfig, eval_dir: Path, written_at: str,
                  fingerprint: dict[str, str] | None = None, *,
                  judge_digests: dict[str, str]) -> Path:
    """Write ``eval_dir/eval_config.json`` (atomically; concurrent shards write the same),
    with the agent's file hashes (``fingerprint``) to name what changed next time and the
    judge digests the records carry (``judges.scorer.config_judge_digests`` of the config:
    the judges layer computes them, the config layer only records them)."""
    make_dirs(eval_dir)
    raw = {k: v for k, v in loaded.raw.items() if k != "extends"}  # already merged
    # the judge digests the records carry (of the interpolated judges): `config` keeps
    # `${VAR}` as written and masks secrets, so its judges digest differently
    doc = {"schema_version": SCHEMA_VERSION, "source": str(loaded.path),
           "written_at": written_at, "config": mask_secrets(raw),
           "fingerprint": dict(fingerprint or {}),
           "judge_digests": dict(judge_digests)}
    if loaded.dialects:  # the config was written in another tool's dialect (its pass rule)
        doc["dialects"] = list(loaded.dialects)
    path = eval_dir / RECORDED
    write_text_atomic(path, json.dumps(doc, indent=2, default=str, ensure_ascii=False) + "\n")
    return path


def find_recorded(paths: Sequence[Path]) -> list[Path]:
    """Recorded configs for analysis roots: in a root (``runs/<eval>/``) or, for a root
    that is one run directory, in its parent. Distinct files, in root order."""
    found: list[Path] = []
    for root in paths:
        for candidate in (Path(root) / RECORDED, Path(root).parent / RECORDED):
            if candidate.is_file() and candidate.resolve() not in {f.resolve() for f in found}:
                found.append(candidate)
                break
    return found


def load_recorded(path: Path) -> tuple[LoadedConfig | None, str]:
    """(the recorded config, its source as written), or (None, why it is unusable)."""
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
        raw = doc["config"]
        if not isinstance(raw, dict):
            raise TypeError("`config` is not a mapping")
        # never interpolated: the file is untrusted (a downloaded CI artifact) and a
        # `${PGPASSWORD}` in its name or paths must stay that text, never the value
        config = EvalConfig.model_validate(raw)
    except (OSError, ValueError, KeyError, TypeError, ValidationError, RecursionError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"{path} is unusable ({first})"
    dialects = doc.get("dialects")
    dialects = tuple(str(d) for d in dialects) if isinstance(dialects, list) else ()
    return LoadedConfig(config=config, raw=raw, path=path.resolve(), origins={},
                        dialects=dialects), str(doc.get("source") or "unknown")


def recorded_judge_digests(path: Path) -> dict[str, str] | None:
    """{judge: digest} the run recorded beside its config (as its records carry), or None
    (recorded before they were, or unreadable)."""
    from eval_harness._util.atomic_files import read_json

    doc = read_json(path)
    digests = doc.get("judge_digests") if isinstance(doc, dict) else None
    if not isinstance(digests, dict):
        return None
    return {str(k): str(v) for k, v in digests.items()}


def recorded_fingerprint(eval_dir: Path) -> dict[str, str] | None:
    """The agent file hashes recorded by the previous run, or None (no readable record)."""
    try:
        doc = json.loads((eval_dir / RECORDED).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    files = doc.get("fingerprint") if isinstance(doc, dict) else None
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else None
