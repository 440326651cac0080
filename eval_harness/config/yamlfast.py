"""The fast paths for reading run data YAML (agent-eval-harness ``summary.yaml``): same
result as :func:`~eval_harness.config.yamlio.parse_yaml`, faster.

Order: ryaml (the optional ``fast`` extra) where its result provably equals PyYAML's
(below); else :func:`eval_harness.config.yamlblock.read_block`, a pure-Python reader of
the block YAML PyYAML's emitter writes (the default install's path: ~7x faster than
``parse_yaml`` on a 5,000-case summary.yaml, proven equal or falling back); else
``parse_yaml`` itself.

`ryaml <https://pypi.org/project/ryaml/>`_ (Rust ``serde_yaml`` over a port of libyaml)
parses an 836 KB summary.yaml in 0.07 s where ``parse_yaml`` (libyaml compose + our limit
walk + PyYAML construct) takes 1.2-1.9 s; at 48 such files that was most of an analysis.
But ryaml reads YAML 1.2 and ``parse_yaml`` reads YAML 1.1 (PyYAML), so the same text can
mean different data (``yes`` is True in 1.1 and a string in 1.2; ``1e3`` a string in 1.1
and 1000.0 in 1.2), and ryaml ignores tags and merge keys and has its own limits.
:func:`fast_load` therefore uses ryaml's result only when it provably equals
``parse_yaml(text)[0]``, and otherwise returns ``parse_yaml``'s result (or raises its
error, with its message):

- ryaml not importable, or raising (syntax, duplicate keys, depth, huge integers): fallback,
  so errors are always ours (duplicate keys naming both lines, alias and depth limits);
- the text holds a tag (``!``), an anchor (``&``; aliases need one), a merge key (``<<``)
  or a directive (``%``): fallback — these are where ryaml and PyYAML construct
  differently, and where our alias limits apply;
- the text holds a number-like token other than a plain decimal (``1e3``, ``0o17``,
  ``-.5``, ``010``, ``1_000``, ``0x1F``, ...): fallback — 1.2 and 1.1 may read it
  differently (a cheap regex over the text; a token inside a longer string only costs
  speed);
- a loaded string (key or value) that PyYAML's 1.1 implicit resolvers would read as
  anything but a string had it been plain (``yes``, ``on``, ``1:30``, ``2001-12-14``,
  ``010``, ``=``, ``<<``, ...): fallback (a quoted one only costs speed);
- a non-finite float key, or nesting past ``MAX_DEPTH``: fallback.

Plain decimal integers and ``d.d`` floats, ``true``/``false``, ``null``/``~`` and
``.inf``/``.nan`` resolve identically in both; everything else in a scalar is a string in
both, byte for byte (both scanners are libyaml's). ``tests/config/test_yamlfast.py`` checks
this on a corpus of tricky documents and on seeded random ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from eval_harness.config import yamlblock, yamlio

_ryaml: Any
try:  # optional at run time: without it every read takes the PyYAML path
    import ryaml as _ryaml  # type: ignore[no-redef]  # declared Any above
except ImportError:  # pragma: no cover - exercised by monkeypatching in the tests
    _ryaml = None

#: ends a plain scalar (or a key): whitespace (incl. NEL / LS / PS), flow indicators, ':' '#'
_END = r"(?=[\s,\]}:#]|\Z)"
_EXP = r"(?:[eE][-+]?[0-9_]*)?"
#: The readable definition (kept for the tests): a number-like token, at a token start
#: (`x-1e3`, `case-0001` are parts of longer strings) and ending a token, that is not a
#: plain decimal integer or d.d float — YAML 1.2 and 1.1 may read it differently.
RISKY_NUMBER_SPEC = (
    r"(?<![\w.+\-])"
    r"(?![-+]?(?:0|[1-9][0-9]{0,299})(?:\.[0-9]+)?" + _END + ")"
    r"[-+]?(?:0[xXoObB][0-9a-fA-F_]*|(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)"
    + _EXP + ")" + _END
)
#: The same set, written to scan ~10x faster: it starts with a character class (which
#: `re` searches for quickly), checks the token start behind it, then branches on that
#: first character (sign, dot, 0, 1-9).
_RISKY_NUMBER = re.compile(
    r"[-+.0-9](?<![\w.+\-].)(?:"
    r"(?<=[-+])(?!(?:0|[1-9][0-9]{0,299})(?:\.[0-9]+)?" + _END + ")"
    r"(?:0[xXoObB][0-9a-fA-F_]*|(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)" + _EXP + ")"
    + _END +
    r"|(?<=\.)[0-9][0-9_]*" + _EXP + _END +
    r"|(?<=0)(?!(?:\.[0-9]+)?" + _END + r")"
    r"(?:[xXoObB][0-9a-fA-F_]*|[0-9_]*(?:\.[0-9_]*)?" + _EXP + ")" + _END +
    r"|(?<=[1-9])(?![0-9]{0,299}(?:\.[0-9]+)?" + _END + r")"
    r"[0-9_]*(?:\.[0-9_]*)?" + _EXP + _END + ")"
)
#: a tag or an anchor (ryaml ignores tags; aliases need an anchor, and our alias limits
#: apply) — a `!` / `&` at a token start followed by a name
_TAG_OR_ANCHOR = re.compile(r"[!&](?<!\w.)(?=\S)")
#: a directive: `%` at the start of a line
_DIRECTIVE = re.compile("%(?<![^\r\n\x85\u2028\u2029]%)")


def _risky_text(text: str) -> bool:
    """Whether the text holds something ryaml and PyYAML may read differently."""
    return ("<<" in text or _TAG_OR_ANCHOR.search(text) is not None
            or _DIRECTIVE.search(text) is not None or _RISKY_NUMBER.search(text) is not None)


_STR_TAG = "tag:yaml.org,2002:str"
# PyYAML's implicit resolvers by first character (what a plain scalar would become)
_RESOLVERS: dict[str, list[re.Pattern[str]]] = {
    first: [rx for tag, rx in pairs if tag != _STR_TAG]
    for first, pairs in yamlio._Loader.yaml_implicit_resolvers.items()
}


def _resolves_non_str(text: str) -> bool:
    """Whether PyYAML would read ``text``, written plain, as anything but a string."""
    return any(rx.match(text) for rx in _RESOLVERS.get(text[:1], ()))


def _agrees(data: Any) -> bool:
    """Walk ryaml's result (iterative): no string PyYAML would resolve otherwise, no NaN or
    infinite key, nesting within :data:`MAX_DEPTH`. (ryaml builds exact dict / list / str.)"""
    scalars: set[Any] = set()  # every key and every string value, each checked once
    add, update = scalars.add, scalars.update
    stack: list[tuple[Any, int]] = [(data, 0)]
    push, pop, limit = stack.append, stack.pop, yamlio.MAX_DEPTH
    while stack:
        node, depth = pop()
        if depth > limit:
            return False
        items: Iterable[Any]
        if type(node) is dict:
            update(node)
            items = node.values()
        elif type(node) is list:
            items = node
        else:
            items = (node,)
        for value in items:
            kind = type(value)
            if kind is str:
                add(value)
            elif kind is dict or kind is list:
                push((value, depth + 1))
    for s in scalars:
        if type(s) is str:
            if _resolves_non_str(s):
                return False
        elif type(s) is float and not math.isfinite(s):
            return False
    return True


def fast_load(text: str) -> Any:
    """``parse_yaml(text)[0]`` (same data, same errors), through ryaml when that is
    provably the same (see the module docstring)."""
    if len(text) > yamlio.MAX_YAML_BYTES:
        raise yamlio.YamlProblem(
            f"larger than {yamlio.MAX_YAML_BYTES:,} bytes (the YAML size limit)")
    if _ryaml is not None and not _risky_text(text):
        try:
            data = _ryaml.loads(text)
        except Exception:  # any refusal: PyYAML's path gives our error message
            data = _FALLBACK
        if data is not _FALLBACK and _agrees(data):
            return data
    data = yamlblock.read_block(text)  # the default install's fast path (pure Python)
    if data is not yamlblock.FALLBACK:
        return data
    return yamlio.parse_yaml(text)[0]


_FALLBACK = object()
