"""agent-eval-harness's run directories as a run format
(:mod:`eval_harness.analysis.loading.formats`): ``summary.yaml`` (without ``run.json``),
``condition.json``, ``run_result.json``, ``cases/<id>/``.

Reading into the tidy frame is :mod:`eval_harness.aeh.summary_chunk`, scoring
:mod:`eval_harness.aeh.scoring`, cases for people :mod:`eval_harness.aeh.cases`.
Runs with the same levels are replications 1.. in natural order of their run ids.

Options (``load_runs(..., format_options={"agent-eval-harness": {...}})``):

- ``errors``: a case where nothing could be scored is ``exclude``d (errored, this tool's
  rule; the default) or scored ``zero`` (that tool's rule). The CLI's ``--aeh-errors`` and
  the API's ``aeh_errors=`` set it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_harness.aeh.cases import iter_cases, read_run
from eval_harness.aeh.scoring import SUMMARY, AehRule, aeh_rule, is_aeh_run
from eval_harness.analysis.loading.formats import NO, SURE, RunFormat
from eval_harness.analysis.loading.run_views import CaseView, RunInfo
from eval_harness.analysis.loading.runfiles import UnreadableRun, levels_key, natural_key
from eval_harness.judges.reward import DEFAULT_RANGE

if TYPE_CHECKING:
    from eval_harness.analysis.loading.packed import Packed

NAME = "agent-eval-harness"
#: the ``errors`` option's values
ERRORS = ("exclude", "zero")


class AehFormat(RunFormat):
    """agent-eval-harness's layout (see the module docstring)."""

    name = NAME

    def recognise(self, names: Set[str]) -> int:
        return SURE if is_aeh_run(set(names)) else NO

    def prepare(self, judge_specs: Any, options: Mapping[str, Any]) -> AehRule:
        unknown = sorted(set(options) - {"errors"})
        if unknown:
            raise ValueError(f"unknown {NAME} option(s): {', '.join(unknown)} (known: errors)")
        errors = options.get("errors", "exclude")
        if errors not in ERRORS:
            raise ValueError("aeh_errors is `exclude` or `zero`")
        return dataclasses.replace(aeh_rule(judge_specs), errored_as_zero=errors == "zero")

    def read_run(self, run_dir: str, state: Any, specs: Any
                 ) -> tuple[dict[str, Any], Packed] | UnreadableRun:
        from eval_harness.aeh.summary_chunk import read_aeh_chunk  # numpy: only to analyse

        return read_aeh_chunk(run_dir, state, specs)

    def size(self, run_dir: str) -> int:
        with contextlib.suppress(OSError):  # the reader reports it
            return os.stat(os.path.join(run_dir, SUMMARY)).st_size
        return 0

    def number_replications(self, runs: list[dict[str, Any]]) -> None:
        groups: dict[str, list[str]] = {}
        for run in runs:
            groups.setdefault(levels_key(run["levels"]), []).append(run["run_id"])
        for run in runs:
            ids = sorted(set(groups[levels_key(run["levels"])]), key=natural_key)
            run["replication"] = ids.index(run["run_id"]) + 1

    def notes(self, runs: Sequence[Mapping[str, Any]], state: Any) -> list[dict[str, Any]]:
        if not runs:
            return []
        rule: AehRule = state
        out: list[dict[str, Any]] = [{"kind": "scoring", "detail": rule.describe()}]
        assumed = sorted({j for r in runs for j in r.get("assumed_ranges") or []})
        if assumed:
            lo, hi = (rule.reward.score_range if rule.reward and rule.reward.score_range
                      else DEFAULT_RANGE)
            out.append({"kind": "assumed_range", "judges": assumed, "detail": (
                f"summary.yaml states no score_range for {', '.join(assumed)}: normalised "
                f"over [{lo:g}, {hi:g}] (its default); pass its eval.yaml as --config for "
                "the declared ranges")})
        return out

    def run_infos(self, paths: Sequence[Path]) -> list[RunInfo]:
        runs = []
        for path in paths:
            try:
                runs.append(read_run(path))
            except UnreadableRun:
                continue  # --analyze-only names it; browsing shows what can be read
        seen: Counter[str] = Counter()
        infos = []
        for run in sorted(runs, key=lambda r: natural_key(r.run_id)):
            key = repr(sorted(run.levels.items(), key=lambda kv: kv[0]))
            seen[key] += 1
            status = {case.case_id: case.status for case in iter_cases(run.path, run.case_ids,
                                                                sliced=False)}
            counts = Counter(status.get(cid, "incomplete") for cid in run.case_ids)
            infos.append(RunInfo(path=run.path, run_id=run.run_id,
                                 condition_id=run.condition_id, levels=run.levels,
                                 replication=seen[key], status="complete",
                                 counts=dict(counts), layout=NAME))
        return sorted(infos, key=lambda i: str(i.path))

    def case_ids(self, path: Path) -> list[str]:
        return read_run(path).case_ids

    def read_cases(self, path: Path, case_ids: Sequence[str]) -> Iterator[CaseView]:
        return iter_cases(path, case_ids)


#: the one instance registered (:func:`eval_harness.aeh.register`)
FORMAT = AehFormat()
