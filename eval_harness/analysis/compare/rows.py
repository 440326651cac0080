"""The per-case rows of one comparison, kept as columns and built into dicts on access.

At 16 conditions × 5,000 cases the rows are 75,000 dicts (each with two nested side
blocks): ≈ 85 MiB held from the comparisons phase to the end of the command, where the
only consumer that reads every row is the JSON Lines writer. ``CaseRows`` keeps the
columns instead (case ids, statuses, positions into the two ``SideTable`` s and the
compared cases' numbers, ≈ 0.1 KiB per case) and is a read-only ``Sequence`` of the same
dicts: ``rows[i]``, ``len(rows)``, iteration, slicing and ``rows == [...]`` behave as the
list did; each access builds a fresh dict (mutating one changes nothing stored).
``list(rows)`` (or ``plain_comparisons``) gives plain lists, e.g. for ``json.dumps``.

Row fields, in order: ``case_id``, ``status``, ``reason`` (None unless the status needs
one), ``reference`` / ``candidate`` (the side blocks, None where the side lacks the case);
compared cases add ``pass_rate_diff``, ``fisher_p``, ``composite_diff``, ``regressed``,
``improved``, ``fisher_p_adjusted``, ``regressed_significant``, ``improved_significant``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from eval_harness.analysis.compare.sides import SideTable

_COMPARED = ("pass_rate_diff", "fisher_p", "composite_diff", "regressed", "improved",
             "fisher_p_adjusted", "regressed_significant", "improved_significant")


class CaseRows(Sequence[dict[str, Any]]):
    """Rows of one ``compare_sides`` record (see the module docstring).

    ``compared`` holds one list per field of ``_COMPARED`` (JSON-ready values, one entry
    per compared case, in row order); ``slot[i]`` is row ``i``'s index into them (-1: not
    compared)."""

    __slots__ = (
        "_cand",
        "_compared",
        "_ids",
        "_pos_c",
        "_pos_r",
        "_reasons",
        "_ref",
        "_slot",
        "_status",
    )

    def __init__(self, ids: list[str], status: list[str], reasons: list[str],
                 ref: SideTable, pos_r: np.ndarray, cand: SideTable, pos_c: np.ndarray,
                 slot: np.ndarray, compared: Sequence[list[Any]]) -> None:
        self._ids, self._status, self._reasons = ids, status, reasons
        self._ref, self._cand = ref, cand
        self._pos_r, self._pos_c = pos_r.tolist(), pos_c.tolist()
        self._slot = slot.tolist()
        self._compared = tuple(compared)

    def __len__(self) -> int:
        return len(self._ids)

    def _row(self, i: int) -> dict[str, Any]:
        row: dict[str, Any] = {
            "case_id": self._ids[i], "status": self._status[i],
            "reason": self._reasons[i] or None,
            "reference": self._ref.block(self._pos_r[i]),
            "candidate": self._cand.block(self._pos_c[i]),
        }
        s = self._slot[i]
        if s >= 0:
            for name, values in zip(_COMPARED, self._compared, strict=True):
                row[name] = values[s]
        return row

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError("case row index out of range")
        return self._row(j)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._row(i) for i in range(len(self)))

    def json_lines(self, prefix: str, encode: Callable[[Any], str],
                   blocks: dict[int, list[str | None]]) -> Iterator[str]:
        """Each row as ``prefix + "," + <the row's JSON members> + "}\n"`` — the text
        ``encode({**head, **row})`` gives when ``prefix`` is ``encode(head)[:-1]`` and
        ``encode`` is a compact ``JSONEncoder.encode`` (asserted in the tests) — built
        from the columns without making the row dicts. Values are encoded once per
        distinct object (they are shared, see ``sides.floats_or_none``); a side block's
        text once per (side, case) and kept in ``blocks`` (the caller's cache, shared by
        the comparisons a side takes part in)."""
        head = prefix + ',"case_id":'
        ref, cand = _block_texts(self._ref, encode, blocks), _block_texts(self._cand, encode,
                                                                          blocks)
        status, reasons = _texts(self._status, encode), _texts(
            [r or None for r in self._reasons], encode)
        compared = [_texts(v, encode) for v in self._compared]
        names = [f',"{name}":' for name in _COMPARED]
        for i in range(len(self._ids)):
            p_r, p_c, s = self._pos_r[i], self._pos_c[i], self._slot[i]
            parts = [head, encode(self._ids[i]), ',"status":', status[i], ',"reason":',
                     reasons[i], ',"reference":', _block(ref, p_r, self._ref, encode),
                     ',"candidate":', _block(cand, p_c, self._cand, encode)]
            if s >= 0:
                for name, texts in zip(names, compared, strict=True):
                    parts += (name, texts[s])
            parts.append("}\n")
            yield "".join(parts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CaseRows | list | tuple):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the list it replaces

    def __repr__(self) -> str:
        return f"CaseRows({len(self)} rows)"


def _texts(values: list[Any], encode: Callable[[Any], str]) -> list[str]:
    """``encode(v)`` of each value, once per distinct object."""
    memo: dict[int, str] = {}
    out = []
    for v in values:
        text = memo.get(id(v))
        if text is None:
            text = memo[id(v)] = encode(v)
        out.append(text)
    return out


def _block_texts(side: SideTable, encode: Callable[[Any], str],
                 cache: dict[int, list[str | None]]) -> list[str | None]:
    """The cache's list of block texts of ``side`` (filled on use)."""
    texts = cache.get(id(side))
    if texts is None:
        texts = cache[id(side)] = [None] * len(side.blocks)
    return texts


def _block(texts: list[str | None], pos: int, side: SideTable,
           encode: Callable[[Any], str]) -> str:
    if pos < 0:
        return "null"
    text = texts[pos]
    if text is None:
        text = texts[pos] = encode(side.block(pos))
    return text


def plain_comparisons(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` (a ``build_comparisons`` document) with every comparison's ``cases`` as a
    plain list of dicts (what ``json.dumps`` and API users expect); the rest shared."""
    out = dict(doc)
    out["comparisons"] = [
        {**rec, "cases": list(rec["cases"])} if isinstance(rec.get("cases"), CaseRows) else rec
        for rec in doc.get("comparisons") or []]
    return out
