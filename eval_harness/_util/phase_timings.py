"""Phase timings (``--timings``): wall seconds, CPU seconds and peak-memory growth of each
step of an analysis, printed as a table on stderr and written as ``timings.json``.

Code marks a step with ``with phase("load"): ...``. Outside :func:`recording` that is a
shared no-op context manager (one global read, no clock call), so the marks cost nothing
when timings are off. Phases nest (``anova`` › ``per-judge``); a name entered twice
under the same parent accumulates (``calls`` counts the entries).

What is measured, per phase:

- ``wall_s``: ``time.perf_counter`` difference;
- ``cpu_s``: user + system CPU of this process **and of its waited-for children**
  (``getrusage`` SELF + CHILDREN), so work handed to worker processes is counted once
  the pool has been joined inside the phase;
- ``peak_rss_delta_mib``: how far the phase raised the process's peak resident set size
  (after − before). Zero means the phase stayed below an earlier peak, not that it
  allocated nothing; the sum over phases is the growth of the process peak. The peak
  itself is ``peak_rss_mib`` in the totals (children: ``children_peak_rss_mib``, the
  largest single child). On Linux the peak is ``VmHWM`` of ``/proc/self/status``:
  ``ru_maxrss`` would start at the *parent's* peak after a fork/vfork + exec.

Only the thread that started the recording records; phases entered on other threads are
ignored (their time is inside the caller's phase anyway).
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

try:
    import resource
except ImportError:  # pragma: no cover - Windows: CPU from process_time, no peak RSS
    resource = None  # type: ignore[assignment]

SCHEMA_VERSION = 1
_NULL: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
#: ru_maxrss is KiB on Linux and bytes on macOS
_MAXRSS_TO_MIB = 1 / (1024 * 1024) if sys.platform == "darwin" else 1 / 1024


@dataclass(frozen=True)
class Sample:
    """One reading of the clocks: wall, CPU (self + children), peak RSS (MiB)."""

    wall: float
    cpu: float
    peak_mib: float | None
    children_peak_mib: float | None


def _vm_hwm_mib() -> float | None:
    """This process's own peak RSS (Linux ``VmHWM``), or None where there is no /proc."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return None


def sample() -> Sample:
    """Read the clocks now."""
    wall = time.perf_counter()
    if resource is None:  # pragma: no cover
        return Sample(wall, time.process_time(), None, None)
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    peak = _vm_hwm_mib()
    return Sample(wall, cpu, me.ru_maxrss * _MAXRSS_TO_MIB if peak is None else peak,
                  kids.ru_maxrss * _MAXRSS_TO_MIB)


@dataclass
class PhaseTiming:
    """Accumulated cost of one phase (by its path, e.g. ``anova/per-judge``)."""

    path: str  #: names from the outermost phase down, joined with ``/``
    depth: int  #: 0 for a top-level phase
    calls: int = 0  #: how many times the phase was entered
    wall_s: float = 0.0  #: wall-clock seconds
    cpu_s: float = 0.0  #: CPU seconds of this process and its joined children
    peak_rss_delta_mib: float | None = 0.0  #: growth of the process's peak RSS (MiB)

    @property
    def name(self) -> str:
        """The phase's own name (last part of the path)."""
        return self.path.rsplit("/", 1)[-1]

    def add(self, start: Sample, end: Sample) -> None:
        self.calls += 1
        self.wall_s += max(0.0, end.wall - start.wall)
        self.cpu_s += max(0.0, end.cpu - start.cpu)
        if start.peak_mib is None or end.peak_mib is None or self.peak_rss_delta_mib is None:
            self.peak_rss_delta_mib = None
        else:
            self.peak_rss_delta_mib += max(0.0, end.peak_mib - start.peak_mib)


@dataclass
class Recorder:
    """The phases recorded between :func:`recording`'s entry and exit."""

    start: Sample = field(default_factory=sample)
    end: Sample | None = None
    phases: dict[str, PhaseTiming] = field(default_factory=dict)  #: by path, first-entry order
    _stack: list[str] = field(default_factory=list)
    _thread: int = field(default_factory=threading.get_ident)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the ``with`` body as phase ``name`` (nested under the open phase, if any)."""
        if threading.get_ident() != self._thread:
            yield
            return
        path = "/".join([*self._stack, name])
        entry = self.phases.get(path)
        if entry is None:
            entry = self.phases[path] = PhaseTiming(path, len(self._stack))
        self._stack.append(name)
        begin = sample()
        try:
            yield
        finally:
            entry.add(begin, sample())
            self._stack.pop()

    def finish(self) -> None:
        """Stop the total clock (called by :func:`recording` on exit)."""
        self.end = sample()

    def to_dict(self) -> dict[str, Any]:
        """The ``timings.json`` document (docs/cli.md, "Timings")."""
        end = self.end or sample()
        top = [p for p in self.phases.values() if p.depth == 0]
        wall = max(0.0, end.wall - self.start.wall)
        cpu = max(0.0, end.cpu - self.start.cpu)
        return {
            "schema_version": SCHEMA_VERSION,
            "phases": [{
                "name": p.name, "path": p.path, "depth": p.depth, "calls": p.calls,
                "wall_s": round(p.wall_s, 6), "cpu_s": round(p.cpu_s, 6),
                "peak_rss_delta_mib": _round(p.peak_rss_delta_mib),
            } for p in self.phases.values()],
            "total": {
                "wall_s": round(wall, 6), "cpu_s": round(cpu, 6),
                # time inside the recording but in no top-level phase (glue, small steps)
                "unphased_wall_s": round(max(0.0, wall - sum(p.wall_s for p in top)), 6),
                "unphased_cpu_s": round(max(0.0, cpu - sum(p.cpu_s for p in top)), 6),
                # CPU the process used before the clock started: interpreter start, the
                # CLI's imports, config loading (and, after a run, the run itself)
                "cpu_before_s": round(self.start.cpu, 6),
                "peak_rss_mib": _round(end.peak_mib),
                "children_peak_rss_mib": _round(end.children_peak_mib),
            },
        }

    def table(self) -> str:
        """A plain-text table: one line per phase (nested ones indented), then the total."""
        doc = self.to_dict()
        rows: list[tuple[str, float | None, float | None, float | None]] = [
            (("  " * p["depth"]) + p["name"] + (f" x{p['calls']}" if p["calls"] > 1 else ""),
             p["wall_s"], p["cpu_s"], p["peak_rss_delta_mib"]) for p in doc["phases"]]
        total = doc["total"]
        rows.append(("(other)", total["unphased_wall_s"], total["unphased_cpu_s"], None))
        rows.append(("total", total["wall_s"], total["cpu_s"], total["peak_rss_mib"]))
        rows.append(("(before the clock: start-up, config)", None, total["cpu_before_s"], None))
        width = max(len("phase"), *(len(r[0]) for r in rows))
        lines = [f"{'phase':<{width}}  {'wall s':>8}  {'CPU s':>8}  {'+peak MiB':>9}"]
        for label, wall, cpu, mem in rows:
            if label == "total":
                lines.append("-" * len(lines[0]))
            lines.append(f"{label:<{width}}  {_cell(wall, '8.3f'):>8}  {_cell(cpu, '8.3f'):>8}  "
                         f"{_cell(mem, '9.1f'):>9}")
        lines.append("(+peak MiB: growth of the process's peak RSS in that phase; on the "
                     "total line, the peak itself)")
        return "\n".join(lines)

    def write_json(self, path: Path) -> None:
        """Write :meth:`to_dict` to ``path`` (parents created)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    def print_table(self, stream: TextIO | None = None) -> None:
        print(self.table(), file=stream or sys.stderr)


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _cell(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


_ACTIVE: Recorder | None = None


def phase(name: str) -> contextlib.AbstractContextManager[None]:
    """``with phase("load"):`` times its body while a :func:`recording` is open; otherwise
    a shared no-op."""
    rec = _ACTIVE
    return _NULL if rec is None else rec.phase(name)


@contextlib.contextmanager
def recording(enabled: bool = True) -> Iterator[Recorder | None]:
    """Record phases entered inside the ``with`` body; yields the :class:`Recorder` (None
    when ``enabled`` is false, so callers can pass a flag straight through). Recordings do
    not nest: an inner one records into its own recorder and the outer one resumes after."""
    global _ACTIVE
    if not enabled:
        yield None
        return
    outer, rec = _ACTIVE, Recorder()
    _ACTIVE = rec
    try:
        yield rec
    finally:
        rec.finish()
        _ACTIVE = outer
