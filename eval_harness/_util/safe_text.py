"""Terminal- and Markdown-safe text: control, bidi and zero-width characters made visible.

Agent output, judge rationales, case ids and level names reach the console, the
``--verbose`` tee and report.md. Left raw, an ANSI escape sequence (``ESC[2J``, a fake
prompt, a hyperlink, a title change) acts on the reader's terminal, and bidi overrides or
zero-width characters make text read differently from what it is (a "Trojan Source"
trick). :func:`safe_text` replaces:

- C0 controls but tab and newline, DEL, and C1 controls: by their visible Control Picture
  (ESC → ``␛``, BEL → ``␇``, DEL → ``␡``) or ``<U+0085>`` for C1;
- bidi embeddings/overrides/isolates and marks, zero-width characters, the BOM and other
  invisible format characters: by ``<U+202E>``-style text.

Used by the console report, report.md, the ``--verbose`` tee, failure lines on stderr and
``orchestrate show`` / ``runs`` (:func:`safe_stdout`).
(HTML needs none of this: the browser shows escaped text, never interprets it.)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

_INVISIBLE = [
    0x061C, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0x2060,
    0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF,
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    *range(0x2066, 0x2070),  # LRI RLI FSI PDI, deprecated format characters
]


def _table(keep_newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code == 0x09 or (keep_newlines and code == 0x0A):
            continue
        table[code] = chr(0x2400 + code)  # Control Pictures: ␀ ... ␟
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = f"<U+{code:04X}>"
    for code in _INVISIBLE:
        table[code] = f"<U+{code:04X}>"
    return table


_MULTILINE = _table(keep_newlines=True)
_ONE_LINE = _table(keep_newlines=False)


def safe_text(text: Any, *, newlines: bool = True) -> str:
    """``str(text)`` with every control / bidi / invisible character made visible
    (``newlines=False``: a newline too, for one-line contexts)."""
    s = "" if text is None else str(text)
    return s.translate(_MULTILINE if newlines else _ONE_LINE)


class SafeStream:
    """A text stream wrapper passing everything written through :func:`safe_text`."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        """Write ``text`` with control / bidi / invisible characters made visible."""
        return self._inner.write(safe_text(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.contextmanager
def safe_stdout() -> Iterator[None]:
    """While the block runs, ``sys.stdout`` neutralises what it is given (``show``/``runs``
    print run data: an answer holding ``ESC[2J`` must not act on the reader's terminal)."""
    saved = sys.stdout
    sys.stdout = SafeStream(saved)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout = saved
