"""One run's columns in compact form: what a worker process sends back and the collector
keeps (numpy arrays; strings as object arrays whose repeated values are shared objects).

A :class:`~eval_harness.analysis.loading.chunk.Chunk` is built with Python lists (cheap appends,
one record at a time); :func:`pack` turns it into a :class:`Packed` (8 bytes per value
instead of a list slot plus a float object, and one pickled copy of each repeated string).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from eval_harness.analysis.loading.chunk import Chunk


class Sources(Protocol):
    """Where a run's samples came from, when a format keeps them compactly (e.g. positions
    in one file): ``at(i)`` is sample ``i``'s source, an object whose ``record(cache)``
    re-reads its record (``cache``: an OrderedDict the format may keep parsed files in)."""

    def at(self, i: int) -> Any:
        """The source of sample ``i``."""


def _objects(values: list[Any]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


@dataclass
class Packed:
    """One run's samples (``s_*``) and rows (``r_*``, ``r_sample`` a local sample index)."""

    s_rep: np.ndarray
    s_case: np.ndarray
    s_status: np.ndarray
    s_latency: np.ndarray
    s_cost: np.ndarray
    s_tokens: np.ndarray
    s_tools: np.ndarray
    s_hash: np.ndarray
    s_finished: np.ndarray
    sources: Any  # a Sources, or an object array of record paths / dicts
    r_sample: np.ndarray
    r_judge: np.ndarray
    r_value: np.ndarray
    r_kind: np.ndarray
    r_err: np.ndarray
    r_norm: np.ndarray
    case_tags: dict[str, dict[str, Any]] = field(default_factory=dict)
    composite_unknown: bool = False
    composite_inferred: bool = False
    bad_records: list[str] = field(default_factory=list)
    bad_values: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.s_case)

    def source(self, i: int) -> Any:
        """The source behind sample ``i`` (a path, a dict, or an object with ``record``)."""
        return self.sources[i] if isinstance(self.sources, np.ndarray) else self.sources.at(i)


def pack(chunk: Chunk, sources: Sources | None = None) -> Packed:
    """``chunk`` as arrays; ``sources``: its samples' sources kept compactly by the run
    format (default: ``chunk.s_source`` as they are)."""
    floats = np.float64
    kept: Any = sources if sources is not None else _objects(chunk.s_source)
    return Packed(
        s_rep=np.asarray(chunk.s_rep, dtype=np.int64),
        s_case=_objects(chunk.s_case),
        s_status=_objects(chunk.s_status),
        s_latency=np.asarray(chunk.s_latency, dtype=floats),
        s_cost=np.asarray(chunk.s_cost, dtype=floats),
        s_tokens=np.asarray(chunk.s_tokens, dtype=floats),
        s_tools=np.asarray(chunk.s_tools, dtype=floats),
        s_hash=_objects(chunk.s_hash),
        s_finished=_objects(chunk.s_finished),
        sources=kept,
        r_sample=np.asarray(chunk.r_sample, dtype=np.int64),
        r_judge=_objects(chunk.r_judge),
        r_value=np.asarray(chunk.r_value, dtype=floats),
        r_kind=_objects(chunk.r_kind),
        r_err=np.asarray(chunk.r_err, dtype=bool),
        r_norm=np.asarray(chunk.r_norm, dtype=floats),
        case_tags=chunk.case_tags,
        composite_unknown=chunk.composite_unknown,
        composite_inferred=chunk.composite_inferred,
        bad_records=chunk.bad_records,
        bad_values=chunk.bad_values,
    )
