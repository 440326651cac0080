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

from collections.abc import Iterator, Mapping, Sequence
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

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CaseRows | list | tuple):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like the list it replaces

    def __repr__(self) -> str:
        return f"CaseRows({len(self)} rows)"


def plain_comparisons(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` (a ``build_comparisons`` document) with every comparison's ``cases`` as a
    plain list of dicts (what ``json.dumps`` and API users expect); the rest shared."""
    out = dict(doc)
    out["comparisons"] = [
        {**rec, "cases": list(rec["cases"])} if isinstance(rec.get("cases"), CaseRows) else rec
        for rec in doc.get("comparisons") or []]
    return out
