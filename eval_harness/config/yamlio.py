"""Safe YAML reading with bounded cost, for every YAML file the tool reads.

Every read (eval.yaml and its profiles, dataset files, agent-eval-harness ``summary.yaml``
in a runs directory) goes through :func:`parse_yaml`, which on top of ``safe_load``:

- refuses files larger than :data:`MAX_YAML_BYTES`;
- bounds alias expansion: the nodes reachable through aliases beyond the document's own
  may number at most :data:`MAX_ALIAS_NODES` (a 450-byte "billion laughs" document would
  otherwise expand to 10^9 nodes in every later walk of the data); recursive aliases are
  refused;
- bounds nesting depth (:data:`MAX_DEPTH`), so no later recursive walk can overflow;
- makes a duplicate mapping key an error naming both lines (YAML itself keeps the last).

Run data (agent-eval-harness ``summary.yaml``) is read through
:func:`eval_harness.config.yamlfast.fast_load`, which returns exactly what
:func:`parse_yaml` returns (same limits, same errors) and is faster where it can prove that.

The key-path -> line map of :func:`load_yaml_text` feeds error messages.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from eval_harness._util.regular_files import open_regular
from eval_harness.errors import ConfigError

KeyPath = tuple[str | int, ...]

#: largest YAML file read (bytes)
MAX_YAML_BYTES = 64 * 1024 * 1024
#: nodes an alias may add beyond the document's own nodes, summed over all aliases
MAX_ALIAS_NODES = 100_000
#: deepest nesting of mappings / sequences
MAX_DEPTH = 200

try:  # libyaml's parser and composer when available (same documents, ~10x faster)
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader

_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlProblem(ValueError):
    """A YAML text that cannot be read: syntax, a limit or a duplicate key."""

    def __init__(self, message: str, line: int | None = None,
                 key_path: KeyPath | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.problem = message
        self.line = line
        #: where in the document (for a limit met at a place: the nesting depth)
        self.key_path = key_path

    def where(self) -> str:
        """The key path, shortened for one line (``metadata.k.k.k.k…[+195]``), or ""."""
        if not self.key_path:
            return ""
        shown = format_path(self.key_path[:6])
        rest = len(self.key_path) - 6
        return shown + (f"…(+{rest} levels)" if rest > 0 else "")


#: a key path as a linked list, (parent, key), built only when an error needs it
_Link = tuple[Any, str | int] | None


def _unlink(link: _Link) -> KeyPath:
    parts: list[str | int] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


def _children_at(node: yaml.Node, link: _Link) -> list[tuple[yaml.Node, _Link]]:
    """The child nodes with their key-path links (a key node sits at its mapping)."""
    if isinstance(node, yaml.MappingNode):
        out: list[tuple[yaml.Node, _Link]] = []
        for k, v in node.value:
            name = k.value if isinstance(k, yaml.ScalarNode) else "?"
            out += [(k, link), (v, (link, name))]
        return out
    if isinstance(node, yaml.SequenceNode):
        return [(v, (link, i)) for i, v in enumerate(node.value)]
    return []


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_keys(node: yaml.MappingNode) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
            continue
        line = key.start_mark.line + 1
        first = seen.get((key.tag, key.value))
        if first is not None:
            raise YamlProblem(f"duplicate key {key.value!r} (lines {first} and {line}); "
                              "YAML would silently keep only the last", line)
        seen[(key.tag, key.value)] = line


def check_node(root: yaml.Node) -> None:
    """Raise YamlProblem when ``root`` breaks a limit or repeats a key (iterative: no
    recursion however deep the input)."""
    size: dict[int, int] = {}  # id(node) -> nodes in its full expansion
    physical = 0
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool, int, _Link]] = [(root, False, 1, None)]
    while stack:
        node, done, depth, link = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] - physical > MAX_ALIAS_NODES:
                raise YamlProblem(f"aliases expand to more than {MAX_ALIAS_NODES:,} extra "
                                  "nodes (an alias bomb?)", node.start_mark.line + 1)
            continue
        if key in on_path:
            raise YamlProblem("recursive alias (a node contains itself)",
                              node.start_mark.line + 1)
        if key in size:
            continue
        if depth > MAX_DEPTH:
            raise YamlProblem(f"nested deeper than {MAX_DEPTH} levels",
                              node.start_mark.line + 1, _unlink(link))
        physical += 1
        if isinstance(node, yaml.MappingNode):
            _check_keys(node)
        on_path.add(key)
        stack.append((node, True, depth, link))
        for child, child_link in reversed(_children_at(node, link)):
            if id(child) not in size:
                stack.append((child, False, depth + 1, child_link))
            elif id(child) in on_path:
                raise YamlProblem("recursive alias (a node contains itself)",
                                  child.start_mark.line + 1)


def parse_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """(data, root node) of one YAML document, within the limits above."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlProblem(f"larger than {MAX_YAML_BYTES:,} bytes (the YAML size limit)")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        check_node(node)
        return loader.construct_document(node), node
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise YamlProblem(f"invalid YAML: {exc.problem or exc}", line) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"invalid YAML: {exc}") from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops this first
        raise YamlProblem(f"nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def read_yaml_text(path: str | os.PathLike[str], *, nofollow: bool = False) -> str:
    """The text of a YAML file, refusing one past :data:`MAX_YAML_BYTES` before reading it
    (``nofollow``: refuse a symlink, for files read from run data).

    Raises OSError / UnicodeDecodeError / YamlProblem."""
    with os.fdopen(open_regular(path, nofollow=nofollow), "rb") as fh:  # never a FIFO
        data = fh.read(MAX_YAML_BYTES + 1)
    if len(data) > MAX_YAML_BYTES:
        raise YamlProblem(f"larger than {MAX_YAML_BYTES:,} bytes (the YAML size limit)")
    return data.decode("utf-8")


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


#: plain words YAML 1.1 reads as booleans (PyYAML: on/off/yes/no; the spec adds y/n)
YAML11_BOOLEANS = frozenset({"on", "off", "yes", "no", "y", "n"})
_BOOL_TAG = "tag:yaml.org,2002:bool"


def _yaml11_booleans(node: yaml.Node, path: KeyPath,
                     out: list[tuple[KeyPath, str, int]]) -> None:
    """Key paths of plain (unquoted) scalars that are YAML 1.1 boolean words."""
    stack = [(node, path)]
    while stack:
        n, p = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            if not n.style and n.value.lower() in YAML11_BOOLEANS:  # libyaml: "" = plain
                out.append((p, n.value, n.start_mark.line + 1))
        elif isinstance(n, yaml.MappingNode):
            stack.extend((v, (*p, k.value if isinstance(k, yaml.ScalarNode) else str(k)))
                         for k, v in n.value)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend((v, (*p, i)) for i, v in enumerate(n.value))


def yaml11_booleans(text: str) -> list[tuple[KeyPath, str, int]]:
    """(key path, word, line) of each unquoted ``on/off/yes/no/y/n`` in ``text``: words
    that YAML 1.1 readers (PyYAML, hence agent-eval-harness) turn into true/false while a
    reader takes them for text. Empty when ``text`` does not parse (reported elsewhere)."""
    try:
        _, node = parse_yaml(text)
    except YamlProblem:
        return []
    out: list[tuple[KeyPath, str, int]] = []
    if node is not None:
        _yaml11_booleans(node, (), out)
    return out


def load_yaml_text(text: str, file: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse ``text`` safely; return the data and a key-path -> line map."""
    try:
        data, node = parse_yaml(text)
    except YamlProblem as exc:
        hint = ("check indentation and quoting" if exc.problem.startswith("invalid YAML")
                else None)
        raise ConfigError(exc.problem, file=file, line=exc.line, path=exc.where(),
                          hint=hint) from None
    lines: dict[KeyPath, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def load_yaml_file(path: Path) -> tuple[Any, dict[KeyPath, int]]:
    """Read and parse one YAML file (errors name the file)."""
    try:
        text = read_yaml_text(path)
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path), hint="check the path") from None
    except YamlProblem as exc:
        raise ConfigError(exc.problem, file=str(path)) from None
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
