"""A pure-Python reader for the block YAML that PyYAML's emitter writes — the default
install's fast path for run data (agent-eval-harness ``summary.yaml``, written by
``yaml.dump(default_flow_style=False)``).

:func:`read_block` returns exactly what :func:`eval_harness.config.yamlio.parse_yaml`
returns (``[0]``: same keys, same values, same types) or :data:`FALLBACK` when the text
holds anything outside the shapes it knows; the caller then takes PyYAML's path, which
gives PyYAML's result or its error. It never guesses: any doubt is a fallback.

What it accepts (everything else falls back):

- block mappings and block sequences, indented with spaces only, the root a mapping at
  column 0; sequences inside a mapping indented as PyYAML writes them (``key:`` then
  ``- item`` at the key's column) or deeper; ``- key: value`` (a mapping inside a
  sequence item); ``{}`` and ``[]`` as empty values;
- keys: plain or quoted scalars on one line, each key once per mapping (a repeated key,
  even ``1`` and ``1.0``, falls back: ``parse_yaml`` refuses some of those and PyYAML
  keeps the last of the others);
- scalars on one line: plain ones (resolved with PyYAML's own implicit resolvers; a
  plain scalar that resolves to anything but a string is constructed by ``parse_yaml``
  itself, once per distinct text, and must come back as an int, float, bool or None,
  else fallback — timestamps, ``=``, ``<<`` fall back), single-quoted (``''``) and
  double-quoted with PyYAML's escapes (its own escape tables);
- a mapping value that continues on deeper lines (a long string PyYAML wrapped, quoted
  or plain; it must start as a plain or quoted scalar): its lines are handed to
  ``parse_yaml`` (all such values of a text in one document, see :func:`_fill_continued`;
  a mapping value ends at the first non-blank line not deeper than its key, in PyYAML's
  scanner as here), and its values used.

It falls back on: tabs, ``\\r``, NEL/LS/PS, BOM, characters PyYAML's reader refuses,
comments, directives and document markers, anchors, aliases, tags, flow collections
other than ``{}`` / ``[]``, block scalars (``|``, ``>``), complex keys (``?``),
nested ``- -`` items, whitespace-only lines, trailing spaces, nesting past
``MAX_DEPTH`` / 2, a scalar-only or empty document.

``tests/config/test_yamlblock.py`` proves the equality on generated documents
(hypothesis, dumped by PyYAML in the writers' styles) and on every run file of the test
fixtures and agent-eval-harness's sample runs.
"""

from __future__ import annotations

import re
from typing import Any

import yaml.reader
import yaml.scanner

from eval_harness.config import yamlio


class _Fallback(Exception):
    """Raised inside the reader: the text is outside the accepted shapes."""


#: returned by :func:`read_block` when the text must take PyYAML's path
FALLBACK: Any = object()

#: anything the reader does not handle anywhere in a text: tab, CR, NEL, LS, PS, BOM,
#: and every character PyYAML's reader refuses (its own pattern, widened)
REFUSED_SPEC = "[\t\r\x85\u2028\u2029\ufeff]|" + yaml.reader.Reader.NON_PRINTABLE.pattern
#: the same set as one character class (5x faster to search; the tests check they agree
#: on every code point)
_REFUSED = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
    "\U00010000-\U0010ffff]")
#: characters that may not start a plain scalar (PyYAML's indicators); '-', '?' and ':'
#: may when a non-space follows
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVERS: dict[str | None, list[re.Pattern[str]]] = {
    first: [rx for tag, rx in pairs if tag != _STR_TAG]
    for first, pairs in yamlio._Loader.yaml_implicit_resolvers.items()
}
#: a double-quoted scalar on one line: its content (escapes still in it)
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)")
_REPLACEMENTS: dict[str, str] = dict(yaml.scanner.Scanner.ESCAPE_REPLACEMENTS)
_CODES: dict[str, int] = dict(yaml.scanner.Scanner.ESCAPE_CODES)
_HEX = frozenset("0123456789abcdefABCDEF")
#: non-string plain scalars seen so far (text -> value), bounded
_RESOLVED: dict[str, Any] = {}
_MAX_RESOLVED = 4096
_MAX_KEY = 1000
_MISSING: Any = object()
_MAX_SPACES = 255
_SPACES = [" " * n for n in range(_MAX_SPACES + 1)]
_MAX_NESTING = yamlio.MAX_DEPTH // 2


def _plain(text: str) -> Any:
    """The value of a plain scalar, exactly as PyYAML reads it, or _Fallback."""
    first = text[0]
    if first in _INDICATORS and (first not in "-?:" or len(text) < 2 or text[1] == " "):
        raise _Fallback
    if (": " in text or " #" in text or text[-1] in ": " or text.startswith("---")
            or text.startswith("...")):
        raise _Fallback
    resolvers = _RESOLVERS.get(first)
    if resolvers is None or not any(rx.match(text) for rx in resolvers):
        return text
    try:
        return _RESOLVED[text]
    except KeyError:
        pass
    try:
        value = yamlio.parse_yaml(text)[0]
    except Exception:  # PyYAML's path gives the error
        raise _Fallback from None
    if type(value) not in (int, float, bool, type(None)):
        raise _Fallback  # a timestamp, '=', '<<' ...: the whole text takes PyYAML's path
    if len(_RESOLVED) < _MAX_RESOLVED:
        _RESOLVED[text] = value
    return value


def _unescape(match: re.Match[str]) -> str:
    ch = match.group(1)
    got = _REPLACEMENTS.get(ch)
    if got is not None:
        return got
    raise _Fallback  # \x, \u, \U are handled by _double; anything else is an error


def _double(body: str) -> str:
    """The value of a double-quoted scalar's content (one line)."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        j = body.find("\\", i)
        if j < 0:
            out.append(body[i:])
            break
        out.append(body[i:j])
        ch = body[j + 1]
        width = _CODES.get(ch)
        if width is None:
            out.append(_ESCAPE.sub(_unescape, body[j:j + 2]))
            i = j + 2
            continue
        digits = body[j + 2:j + 2 + width]
        if len(digits) != width or not _HEX.issuperset(digits):
            raise _Fallback
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise _Fallback  # libyaml refuses these (PyYAML's own scanner does not)
        out.append(chr(code))
        i = j + 2 + width
    return "".join(out)


def _scalar(text: str) -> Any:
    """The value of a one-line scalar (a value or a key), or _Fallback."""
    first = text[0]
    if first == "'":
        if len(text) < 2 or text[-1] != "'":
            raise _Fallback
        body = text[1:-1]
        if "'" in body.replace("''", ""):
            raise _Fallback
        return body.replace("''", "'")
    if first == '"':
        match = _DOUBLE.fullmatch(text)
        if match is None:
            raise _Fallback
        return _double(match.group(1))
    return _plain(text)


def _split_key(rest: str, memo: dict[str, Any]) -> tuple[Any, str | None]:
    """(key, value text or None when the line ends after ':') of a mapping line."""
    first = rest[0]
    if first == "'" or first == '"':
        end = _quoted_end(rest)
        key_text, after = rest[:end], rest[end:]
        if after == ":":
            return _key(key_text, memo), None
        if after[:2] != ": ":
            raise _Fallback
        value = after[2:]
    else:
        i = rest.find(": ")
        if i < 0:
            if rest[-1] != ":":
                raise _Fallback
            key_text, value_text = rest[:-1], None
            if not key_text:
                raise _Fallback
            return _key(key_text, memo), value_text
        key_text, value = rest[:i], rest[i + 2:]
        if not key_text:
            raise _Fallback
    if not value or value[0] == " ":
        raise _Fallback
    return _key(key_text, memo), value


def _key(text: str, memo: dict[str, Any]) -> Any:
    if len(text) > _MAX_KEY:
        raise _Fallback
    try:
        return memo[text]
    except KeyError:
        pass
    value = memo[text] = _scalar(text)
    return value


def _quoted_end(rest: str) -> int:
    """Index just past the closing quote of the quoted scalar starting ``rest``."""
    quote = rest[0]
    i = 1
    n = len(rest)
    while i < n:
        ch = rest[i]
        if quote == "'":
            if ch == "'":
                if i + 1 < n and rest[i + 1] == "'":
                    i += 2
                    continue
                return i + 1
        elif ch == "\\":
            i += 2
            continue
        elif ch == '"':
            return i + 1
        i += 1
    raise _Fallback


def _value(text: str, memo: dict[str, Any]) -> Any:
    """A value on its line: ``{}``, ``[]`` (new each time) or a scalar (memoised by text:
    scalars are immutable)."""
    try:
        return memo[text]
    except KeyError:
        pass
    if text == "{}":
        return {}
    if text == "[]":
        return []
    value = memo[text] = _scalar(text)
    return value


def read_block(text: str) -> Any:
    """``parse_yaml(text)[0]`` for a text in the accepted shapes, else :data:`FALLBACK`."""
    try:
        return _read(text)
    except (_Fallback, IndexError, RecursionError):
        return FALLBACK


def _read(text: str) -> Any:
    if not text or _REFUSED.search(text) is not None:
        raise _Fallback
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    root: dict[Any, Any] = {}
    # open containers, innermost last: (indent, container, is_sequence)
    stack: list[tuple[int, Any, bool]] = [(0, root, False)]
    # a key (or a '-' item) whose value is the block that follows: (container, key, indent)
    pending: tuple[Any, Any, int] | None = None
    memo: dict[str, Any] = {}  # scalar text -> value (keys and values repeat)
    continued: list[tuple[dict[Any, Any], Any]] = []  # entries whose value spans lines
    parts: list[str] = []  # those values as one document for parse_yaml
    # lines already read as ``key: scalar`` / ``key:`` (not items): (indent, key, value or
    # _MISSING for ``key:``); the same text reads the same wherever its mapping is
    seen: dict[str, tuple[int, Any, Any]] = {}
    count = len(lines)
    index = 0
    while index < count:
        line = lines[index]
        index += 1
        if not line:
            continue
        known = seen.get(line)
        if known is not None and pending is not None:
            # a line read before, opening the mapping a ``key:`` above it waits for
            indent = known[0]
            owner, key, p_indent = pending
            if indent > p_indent and len(stack) <= _MAX_NESTING:
                child_map: dict[Any, Any] = {}
                if type(owner) is dict:
                    owner[key] = child_map
                else:
                    owner.append(child_map)
                stack.append((indent, child_map, False))
                pending = None
        if known is not None and pending is None:
            # a line read before (``key: scalar`` or ``key:``), in the mapping on top
            indent, key, value = known
            top_indent, container, is_seq = stack[-1]
            if indent == top_indent and not is_seq and key not in container and not (
                    index < count and lines[index].startswith(
                        _SPACES[indent + 1] if indent < _MAX_SPACES else " " * (indent + 1))):
                container[key] = None if value is _MISSING else value
                if value is _MISSING:
                    pending = (container, key, indent)
                continue
        rest = line.lstrip(" ")
        indent = len(line) - len(rest)
        if not rest:
            raise _Fallback  # whitespace only
        first = rest[0]
        if first == "#" or line[-1] == " ":
            raise _Fallback
        item = first == "-" and (len(rest) == 1 or rest[1] == " ")
        if pending is not None:
            owner, key, p_indent = pending
            pending = None
            if indent > p_indent or (item and indent == p_indent and type(owner) is dict):
                if len(stack) > _MAX_NESTING:
                    raise _Fallback
                child: Any = [] if item else {}
                if type(owner) is dict:
                    owner[key] = child
                else:
                    owner.append(child)
                stack.append((indent, child, item))
            else:
                if type(owner) is dict:
                    owner[key] = None
                else:
                    owner.append(None)
        top_indent, container, is_seq = stack[-1]
        while indent < top_indent or (indent == top_indent and is_seq and not item):
            stack.pop()
            if not stack:
                raise _Fallback
            top_indent, container, is_seq = stack[-1]
        if indent != top_indent or is_seq != item:
            raise _Fallback
        if item:
            if len(rest) == 1:  # '-' alone: the value is the block below (or null)
                pending = (container, None, indent)
                continue
            rest = rest[2:]
            if not rest or rest[0] == " ":
                raise _Fallback
            if rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
                raise _Fallback  # '- - x'
            if ": " not in rest and rest[-1] != ":":
                if index < count and _deeper(lines[index], indent):
                    raise _Fallback  # a scalar item continued below
                container.append(_value(rest, memo))
                continue
            # '- key: value': a mapping whose keys sit two columns right of the '-'
            if rest[0] in "'\"" and _quoted_end_safe(rest) == len(rest):
                container.append(_value(rest, memo))  # a quoted item holding ': '
                if index < count and _deeper(lines[index], indent):
                    raise _Fallback
                continue
            if len(stack) > _MAX_NESTING:
                raise _Fallback
            mapping: dict[Any, Any] = {}
            container.append(mapping)
            indent += 2
            stack.append((indent, mapping, False))
            container = mapping
        value_text: str | None
        colon = rest.find(": ")
        if colon > 0 and first != "'" and first != '"':  # the usual line: a plain key
            key_text = rest[:colon]
            if len(key_text) > _MAX_KEY:
                raise _Fallback
            key = memo.get(key_text, _MISSING)
            if key is _MISSING:
                key = _key(key_text, memo)
            value_text = rest[colon + 2:]
            if not value_text or value_text[0] == " ":
                raise _Fallback
        else:
            key, value_text = _split_key(rest, memo)
        if key in container:
            raise _Fallback  # a repeated key: parse_yaml's error or PyYAML's last-wins
        if value_text is None:
            container[key] = None  # placeholder keeps the key's position
            pending = (container, key, indent)
            if not item:
                seen[line] = (indent, key, _MISSING)
            continue
        if index < count and lines[index].startswith(
                _SPACES[indent + 1] if indent < _MAX_SPACES else " " * (indent + 1)):
            # a value continued on deeper lines: this key alone through parse_yaml, when
            # the value is a plain or quoted scalar (not a block scalar: '|+' keeps the
            # trailing blank lines the region below drops; no anchor, tag, alias, flow)
            start = value_text[0]
            if start in _INDICATORS and start not in "'\"" and (
                    start not in "-?:" or len(value_text) < 2 or value_text[1] == " "):
                raise _Fallback
            end = index
            while end < count and (not lines[end] or _deeper(lines[end], indent)):
                end += 1
            while lines[end - 1] == "":
                end -= 1
            container[key] = None  # filled in by _fill_continued
            continued.append((container, key))
            parts.append(f"k{len(continued) - 1}: {value_text}")
            parts.extend(line[indent:] for line in lines[index:end])  # "" stays ""
            index = end
            continue
        value = memo.get(value_text, _MISSING)
        if value is _MISSING:
            value = _value(value_text, memo)
        container[key] = value
        if not item and type(value) is not dict and type(value) is not list:
            seen[line] = (indent, key, value)  # immutable: shared by every such line
    if pending is not None:
        owner, key, _ = pending
        if type(owner) is dict:
            owner[key] = None
        else:
            owner.append(None)
    if continued:
        _fill_continued(continued, parts)
    return root


def _quoted_end_safe(rest: str) -> int:
    try:
        return _quoted_end(rest)
    except _Fallback:
        return -1


def _deeper(line: str, indent: int) -> bool:
    """Whether a line is indented past ``indent`` (spaces: tabs never get this far)."""
    return line.startswith(" " * (indent + 1))


def _fill_continued(continued: list[tuple[dict[Any, Any], Any]], parts: list[str]) -> None:
    """Set the values that span several lines, all read by one parse_yaml call.

    Entry ``i`` becomes ``k<i>: <its first line>`` at column 0 followed by its deeper
    lines shifted left by its key's indent (still indented: a plain or quoted scalar
    folds its lines with their leading spaces dropped, so the shift changes nothing, and
    the entry still ends where it ended). Anything but exactly those keys in that order
    is a fallback."""
    try:
        data = yamlio.parse_yaml("\n".join(parts) + "\n")[0]
    except Exception:  # the whole text takes PyYAML's path
        raise _Fallback from None
    if type(data) is not dict or len(data) != len(continued):
        raise _Fallback
    for i, ((owner, key), (got_key, value)) in enumerate(zip(continued, data.items(), strict=True)):
        if got_key != f"k{i}" or type(value) is dict or type(value) is list:
            raise _Fallback
        owner[key] = value
