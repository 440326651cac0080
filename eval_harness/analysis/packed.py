"""One run's columns in compact form: what a worker process sends back and the collector
keeps (numpy arrays; strings as object arrays whose repeated values are shared objects).

A :class:`~eval_harness.analysis.chunk.Chunk` is built with Python lists (cheap appends,
one record at a time); :func:`pack` turns it into a :class:`Packed` (8 bytes per value
instead of a list slot plus a float object, and one pickled copy of each repeated string).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eval_harness.analysis.chunk import Chunk


@dataclass(frozen=True)
class AehSources:
    """Where an imported run's samples came from: its directory, the scoring rule and each
    sample's position in `per_case` (re-read only to compare duplicate samples)."""

    run_dir: str
    rule: Any
    positions: np.ndarray

    def at(self, i: int) -> Any:
        from eval_harness.analysis.aeh_chunk import AehCase

        return AehCase(self.run_dir, int(self.positions[i]), self.rule)


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
    sources: Any  # AehSources, or an object array of record paths / dicts
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
        """The record behind sample ``i`` (a path, a dict, or an AehCase)."""
        return self.sources.at(i) if isinstance(self.sources, AehSources) else self.sources[i]


def pack(chunk: Chunk, aeh: tuple[str, Any] | None = None) -> Packed:
    """``chunk`` as arrays; ``aeh`` = (run directory, rule) when its sources are positions
    in an agent-eval-harness `per_case`."""
    floats = np.float64
    sources: Any = (AehSources(aeh[0], aeh[1], np.asarray(chunk.s_source, dtype=np.int64))
                    if aeh is not None else _objects(chunk.s_source))
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
        sources=sources,
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
