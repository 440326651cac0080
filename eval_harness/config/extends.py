"""``extends``: profiles deep-merged under the extending file.

Rules: mappings merge recursively; scalars (and the extending file's lists) win; the
``judges`` list merges by ``name`` (an entry with a known name is deep-merged over the base
entry, new names are appended); any other list is replaced. Chains are limited to
``MAX_DEPTH`` files; a cycle is an error naming the chain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval_harness.config.yamlio import (
    KeyPath,
    format_path,
    load_yaml_file,
    read_yaml_text,
    yaml11_booleans,
)
from eval_harness.errors import ConfigError

MAX_DEPTH = 8

#: key path -> (file, line) of where the winning value was written
Origins = dict[KeyPath, tuple[str, int]]


def _merge_judges(base: list[Any], over: list[Any]) -> list[Any]:
    out = list(base)
    index = {j.get("name"): i for i, j in enumerate(out) if isinstance(j, dict) and "name" in j}
    for item in over:
        name = item.get("name") if isinstance(item, dict) else None
        if name is not None and name in index:
            out[index[name]] = deep_merge(out[index[name]], item)
        else:
            if name is not None:
                index[name] = len(out)
            out.append(item)
    return out


def deep_merge(base: Any, over: Any, key: str | None = None) -> Any:
    """Merge ``over`` onto ``base`` following the module rules."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = deep_merge(base[k], v, k) if k in base else v
        return out
    if key == "judges" and isinstance(base, list) and isinstance(over, list):
        return _merge_judges(base, over)
    return over


def _origins_of(lines: dict[KeyPath, int], file: str) -> Origins:
    return {path: (file, line) for path, line in lines.items()}


def _refuse_boolean_levels(path: Path) -> None:
    """A matrix level written ``on`` / ``off`` / ``yes`` / ``no`` / ``y`` / ``n`` unquoted
    is a load error: YAML 1.1 makes some of them true/false, so ``retrieval: [off, on]``
    would run the levels False/True and the service would never receive "on"."""
    found = [(p, word, line) for p, word, line in yaml11_booleans(read_yaml_text(path))
             if p[:2] == ("matrix", "factors") and len(p) in (4, 5)
             and isinstance(p[3], int) and p[4:] in ((), ("name",))]
    found.sort(key=lambda f: (f[2], [str(x) for x in f[0]]))
    if found:
        where, word, line = found[0]
        name = format_path(where)
        words = ", ".join(sorted({w for _, w, _ in found}))
        raise ConfigError(
            f"level {word} is a YAML 1.1 boolean word ({words}): it would load as "
            "true/false, not as the text you wrote", path=name, file=str(path), line=line,
            hint=f'quote it: {where[2]}: ["{word}", ...] (or write true/false for booleans)')


def load_with_extends(path: Path, chain: tuple[Path, ...] = ()) -> tuple[dict[str, Any], Origins]:
    """Load ``path`` and everything it extends; return the merged mapping and key origins."""
    path = path.resolve()
    if path in chain:
        names = " -> ".join(p.name for p in (*chain, path))
        raise ConfigError(f"extends cycle: {names}", path="extends", file=str(chain[0]),
                          hint="remove one of the extends entries")
    if len(chain) >= MAX_DEPTH:
        names = " -> ".join(p.name for p in (*chain, path))
        raise ConfigError(f"extends chain deeper than {MAX_DEPTH} files: {names}",
                          path="extends", file=str(chain[0]), hint="flatten the profiles")
    data, lines = load_yaml_file(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"top level must be a mapping, got {type(data).__name__}",
                          file=str(path), line=1, hint="start the file with `name: my-eval`")
    _refuse_boolean_levels(path)
    origins = _origins_of(lines, str(path))
    raw_ext = data.pop("extends", None)
    if raw_ext is None:
        return data, origins
    if isinstance(raw_ext, str):
        ext_list = [raw_ext]
    elif isinstance(raw_ext, list) and all(isinstance(e, str) for e in raw_ext):
        ext_list = list(raw_ext)
    else:
        raise ConfigError("must be a path or a list of paths", path="extends", file=str(path),
                          line=lines.get(("extends",)), hint="extends: [base.yaml]")
    merged: dict[str, Any] = {}
    merged_origins: Origins = {}
    for entry in ext_list:
        base_path = (path.parent / entry)
        if not base_path.exists():
            raise ConfigError(f"extended file not found: {entry}", path="extends",
                              file=str(path), line=lines.get(("extends",)),
                              hint="paths are relative to the extending file")
        if not base_path.is_file():  # a folder, FIFO or device (/dev/zero) never loads
            raise ConfigError(f"extended path is not a regular file: {entry}", path="extends",
                              file=str(path), line=lines.get(("extends",)),
                              hint="extends names YAML files")
        base, base_origins = load_with_extends(base_path, (*chain, path))
        merged = deep_merge(merged, base)
        merged_origins.update(base_origins)
    merged = deep_merge(merged, data)
    merged_origins.update(origins)
    return merged, merged_origins
