"""Frame metadata that pandas must not deep-copy.

pandas copies ``DataFrame.attrs`` with ``copy.deepcopy`` into the result of every
operation (column access, filtering, each group of a ``groupby``). The loader's attrs hold
one entry per case (tags) and per run, so that copy made grouping quadratic in the number
of tagged cases. Wrapping the large values in these containers makes the copy share them
instead: treat attrs as read-only (replace a value, never mutate it in place).
"""

from __future__ import annotations

from typing import Any


class SharedDict(dict):  # type: ignore[type-arg]
    """A dict that ``copy.deepcopy`` shares instead of copying (read-only by convention)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedDict:
        return self


class SharedList(list):  # type: ignore[type-arg]
    """A list that ``copy.deepcopy`` shares instead of copying (read-only by convention)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedList:
        return self
