"""Safe YAML reading that remembers the line of every key, for error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from eval_harness.errors import ConfigError

KeyPath = tuple[str | int, ...]


def _walk(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            sub = (*path, key)
            lines[sub] = key_node.start_mark.line + 1
            _walk(value_node, sub, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines)


def load_yaml_text(text: str, file: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse ``text`` with ``yaml.safe_load``; return the data and a key-path -> line map."""
    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ConfigError(
            f"invalid YAML: {exc.problem or exc}", file=file, line=line,
            hint="check indentation and quoting",
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    lines: dict[KeyPath, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def load_yaml_file(path: Path) -> tuple[Any, dict[KeyPath, int]]:
    """Read and parse one YAML file (errors name the file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path), hint="check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", file=str(path)) from None
    return load_yaml_text(text, str(path))


def format_path(path: KeyPath) -> str:
    """``("judges", 0, "name")`` -> ``judges[0].name``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
