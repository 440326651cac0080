"""The run-format registry: which layouts of run directories analysis reads.

A *run format* is another tool's (or an older version's) layout of one run directory.
Each registered format says three things:

1. **whether it recognises a directory** — :meth:`RunFormat.recognise` gets the names in
   the directory and answers :data:`NO`, :data:`FALLBACK` (the layout fits loosely) or
   :data:`SURE`; the best answer wins, ties go to the format registered first. The walk
   (:mod:`~eval_harness.analysis.loading.discover`) never descends into a recognised run;
2. **how it reads a run into the tidy frame** — :meth:`RunFormat.prepare` turns the
   analysis's judge specs and this format's *options* into a picklable state once per
   load (``load_runs(..., format_options={name: {...}})``; a bad option is a ValueError);
   :meth:`RunFormat.read_run` reads one directory into its run dict and its samples
   (:class:`~eval_harness.analysis.loading.packed.Packed`, built with
   :class:`~eval_harness.analysis.loading.chunk.Chunk`), possibly in a worker process;
   :meth:`RunFormat.number_replications` and :meth:`RunFormat.notes` see all of its runs
   that were kept;
3. **how it reads cases for people** — :meth:`RunFormat.run_infos`,
   :meth:`RunFormat.case_ids` and :meth:`RunFormat.read_cases` (``orchestrate runs`` /
   ``show``, the report's drill-down, the dashboard).

The run dict of a run has ``eval``, ``run_id``, ``condition_id``, ``levels`` (factor →
level), ``replication``, ``finished_at``, ``cost_usd`` (the run's total when only that is
known, else None) and ``format`` (the format's name).

This tool's own layout, :data:`NATIVE`, is registered here; the loader reads it in two
phases (metadata, then the cases of the runs kept). agent-eval-harness's layout is the
second format (:mod:`eval_harness.aeh`), registered by the application layer. To add
one: subclass :class:`RunFormat`, and call :func:`register_format` with an instance before
analysing (the application layer does it for the formats every door reads).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_harness.analysis.loading.run_views import CaseView, RunInfo

if TYPE_CHECKING:
    from eval_harness.analysis.loading.packed import Packed
    from eval_harness.analysis.loading.runfiles import UnreadableRun

#: recognition answers (:meth:`RunFormat.recognise`)
NO, FALLBACK, SURE = 0, 1, 2
#: this tool's own layout
NATIVE = "native"


class RunFormat:
    """One layout of run directories (see the module docstring). Subclasses override
    what they support; the defaults recognise nothing and read nothing."""

    #: the name recorded in ``RunDir.layout``, ``RunInfo.layout``, each run dict's
    #: ``format`` and the frame's ``attrs["formats"]``
    name: str = ""

    def recognise(self, names: Set[str]) -> int:
        """:data:`SURE`, :data:`FALLBACK` or :data:`NO` for a directory holding ``names``."""
        return NO

    def prepare(self, judge_specs: Any, options: Mapping[str, Any]) -> Any:
        """The reading state for one load (picklable): from the analysis's judge specs (an
        ``EvalConfig``, its judges, {judge: spec} or None) and this format's options.
        Raises ValueError for an option it does not know or a bad value."""
        if options:
            raise ValueError(f"run format {self.name!r} takes no options "
                             f"(got {', '.join(sorted(options))})")
        return None

    def read_run(self, run_dir: str, state: Any, specs: Any
                 ) -> tuple[dict[str, Any], Packed] | UnreadableRun:
        """(run dict, samples) of one run directory, or the UnreadableRun saying why not
        (returned, not raised, so a worker process hands it back). ``specs``: the
        coerced judge specs ({judge: JudgeSpec} or None) for composites."""
        raise NotImplementedError

    def size(self, run_dir: str) -> int:
        """Bytes :meth:`read_run` will parse (worker processes start beyond a few MB)."""
        return 0

    def number_replications(self, runs: list[dict[str, Any]]) -> None:
        """Set each kept run's ``replication`` (in place) when the layout records none."""

    def notes(self, runs: Sequence[Mapping[str, Any]], state: Any) -> list[dict[str, Any]]:
        """Issues (``{"kind", "detail", ...}``) about how this format's runs were read."""
        return []

    def run_infos(self, paths: Sequence[Path]) -> list[RunInfo]:
        """The runs at ``paths`` (all of this format) for ``orchestrate runs``, in path
        order; an unreadable one is left out."""
        return []

    def case_ids(self, path: Path) -> list[str]:
        """The case ids of one run."""
        return []

    def read_cases(self, path: Path, case_ids: Sequence[str]) -> Iterator[CaseView]:
        """The cases ``case_ids`` of one run that it has, in that order, each once."""
        return iter(())


class _Native(RunFormat):
    """This tool's layout: ``run.json`` (sure), or ``condition.json`` beside ``cases/``
    (run.json lost: a fallback). Read by the loader and ``browse`` themselves."""

    name = NATIVE

    def recognise(self, names: Set[str]) -> int:
        if "run.json" in names:
            return SURE
        if "condition.json" in names and "cases" in names:
            return FALLBACK
        return NO


_FORMATS: dict[str, RunFormat] = {NATIVE: _Native()}


def register_format(fmt: RunFormat) -> None:
    """Read run directories of ``fmt``'s layout from now on (again: replaces the format of
    that name, keeping its place)."""
    if not fmt.name or fmt.name == NATIVE:
        raise ValueError(f"a run format needs its own name (got {fmt.name!r})")
    _FORMATS[fmt.name] = fmt


def formats() -> tuple[RunFormat, ...]:
    """The registered formats, native first, then in registration order."""
    return tuple(_FORMATS.values())


def get_format(name: str) -> RunFormat:
    """The format named ``name`` (KeyError when none is registered)."""
    return _FORMATS[name]


def classify(names: Set[str]) -> str | None:
    """The name of the format that recognises a directory holding ``names`` best, or None."""
    best, chosen = NO, None
    for fmt in _FORMATS.values():
        got = fmt.recognise(names)
        if got > best:
            best, chosen = got, fmt.name
    return chosen


def classify_dir(path: str | Path) -> str | None:
    """:func:`classify` for a directory on disk (None when it cannot be listed)."""
    try:
        names = set(os.listdir(path))
    except OSError:
        return None
    return classify(names)
