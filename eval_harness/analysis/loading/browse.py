"""Read run directories for people: what ran (``orchestrate runs``) and one case across the
conditions (``orchestrate show``). Reads only the run-directory contract (run.json /
condition.json, cases/*/record.json, input.json, outputs.json), and other tools' runs
through their run format (:mod:`eval_harness.analysis.loading.formats`); never the runner.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval_harness._util.atomic_files import read_json
from eval_harness._util.numbers import run_number
from eval_harness.analysis.loading.discover import find_run_dirs
from eval_harness.analysis.loading.formats import NATIVE, get_format
from eval_harness.analysis.loading.run_views import JudgeView, RunInfo, SampleView
from eval_harness.errors import UsageError
from eval_harness.store.confine import RunFileProblem, read_run_json

__all__ = ["JudgeView", "RunInfo", "SampleView", "case_across_conditions", "case_ids",
           "list_runs", "sample", "select_runs"]


def _obj(value: Any) -> dict[str, Any]:
    """A JSON object read from run data, or {} (a list, a string, unreadable: untrusted
    files of any shape are shown, never a crash)."""
    return value if isinstance(value, dict) else {}



def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _case_dirs(run: Path) -> list[Path]:
    cases = run / "cases"
    if not cases.is_dir():
        return []
    return sorted((p for p in cases.iterdir() if p.is_dir()), key=lambda p: p.name)


def _run_info(path: Path) -> RunInfo:
    rec = _obj(read_json(path / "run.json"))
    cond = _obj(read_json(path / "condition.json"))
    counts: Counter[str] = Counter()
    for case in _case_dirs(path):
        record = read_json(case / "record.json")
        counts[str(record.get("status", "ok")) if isinstance(record, dict) else "incomplete"] += 1
    rep = rec.get("replication")
    levels = rec.get("levels") or cond.get("levels")
    return RunInfo(
        path=path, run_id=str(rec.get("run_id") or path.name),
        condition_id=str(rec.get("condition_id") or cond.get("condition_id") or ""),
        levels=dict(levels) if isinstance(levels, dict) else {},
        replication=rep if isinstance(rep, int) and not isinstance(rep, bool) else 1,
        status=str(rec.get("status") or "unknown"), counts=dict(counts),
    )


def list_runs(roots: Sequence[str | os.PathLike[str]]) -> list[RunInfo]:
    """Every run directory of this tool's layout under ``roots``, in path order.

    Raises UsageError when a root is missing or holds no run directory. Runs of other
    formats follow this tool's, per format (``RunFormat.run_infos``).
    """
    found = find_run_dirs(roots)
    if not found:
        raise UsageError(f"no run directories under {', '.join(map(str, roots))}",
                         hint="point at runs/<eval>/ (written by orchestrate --config ...)")
    out = [_run_info(Path(r.path)) for r in found if r.layout == NATIVE]
    others: dict[str, list[Path]] = {}
    for r in found:
        if r.layout != NATIVE:
            others.setdefault(r.layout, []).append(Path(r.path))
    for layout, paths in others.items():
        out += get_format(layout).run_infos(paths)
    return out


def select_runs(runs: Sequence[RunInfo], specs: Sequence[str] | None) -> list[RunInfo]:
    """Runs whose condition matches any spec (``matrix.select``: levels, an id prefix or a
    condition label)."""
    if not specs:
        return list(runs)
    from eval_harness.matrix.select import select_matching

    return select_matching(runs, specs, sorted({k for r in runs for k in r.levels}),
                           UsageError(f"no run matches --condition {', '.join(specs)}",
                                      hint="list the conditions with: orchestrate runs DIR"))


def case_ids(runs: Sequence[RunInfo]) -> list[str]:
    """Every case id seen in the runs, sorted."""
    return sorted({c.name for r in runs if r.layout == NATIVE for c in _case_dirs(r.path)}
                  | {c for r in runs if r.layout != NATIVE
                     for c in get_format(r.layout).case_ids(r.path)})


def _output(outputs: Any) -> str | None:
    if not isinstance(outputs, dict):
        return None
    out = outputs.get("output")
    return None if out is None else str(out)


def _run_json(path: Path) -> Any:
    """A case file through the confined reader (store.confine.read_run_json): a symlink,
    a file past its size cap or nested too deep reads as absent."""
    try:
        return read_run_json(path)
    except RunFileProblem:
        return None


def sample(run: RunInfo, case_id: str) -> SampleView | None:
    """The case ``case_id`` in ``run``; None when the run never started that case."""
    if run.layout != NATIVE:
        return _other_sample(run, case_id)
    case = run.path / "cases" / case_id
    if not case.is_dir():
        return None
    record = _run_json(case / "record.json")
    outputs = _run_json(case / "outputs.json")
    if not isinstance(record, dict):
        return SampleView(run, case_id, "incomplete", "no record.json (not finished)",
                          _run_json(case / "input.json"), _output(outputs), None, None, None)
    scores = _obj(record.get("scores"))
    judges = [JudgeView(str(name), _value(s.get("value")), _text(s.get("rationale")),
                        bool(s.get("errored")), _text(s.get("error")))
              for name, s in sorted(scores.items(), key=lambda kv: str(kv[0]))
              if isinstance(s, dict)]
    return SampleView(
        run=run, case_id=case_id, status=str(record.get("status", "ok")),
        reason=_text(record.get("reason")), input=_run_json(case / "input.json"),
        output=_output(outputs), latency_s=run_number(record.get("latency_s")),
        cost_usd=run_number(record.get("cost_usd")), composite=run_number(record.get("composite")),
        judges=judges,
    )


def _value(value: Any) -> Any:
    """A judge value as shown: booleans, finite numbers and text as they are; anything
    else (a non-finite number, a nested structure) as short text."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if run_number(value) is not None else f"unusable ({value!r})"
    return f"unusable ({type(value).__name__})"


def case_across_conditions(runs: Sequence[RunInfo], case_id: str) -> list[SampleView]:
    """One case in every run that has it (condition order, then replication)."""
    views = [v for r in runs if (v := sample(r, case_id)) is not None]
    if not views:
        known = case_ids(runs)
        shown = ", ".join(known[:8]) + (" ..." if len(known) > 8 else "")
        raise UsageError(f"case {case_id!r} is in none of the {len(runs)} run(s)",
                         hint=f"cases are: {shown}" if known else "the runs hold no case yet")
    return views


def _other_sample(run: RunInfo, case_id: str) -> SampleView | None:
    """A case of a run in another format (``RunFormat.read_cases``)."""
    case = next(iter(get_format(run.layout).read_cases(run.path, [case_id])), None)
    if case is None:
        return None
    return SampleView(run=run, case_id=case_id, status=case.status, reason=case.reason,
                      input=case.input, output=case.output, latency_s=case.latency_s,
                      cost_usd=case.cost_usd, composite=case.composite, judges=case.judges)
