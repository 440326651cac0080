"""``orchestrate runs RUNS`` (what ran) and ``orchestrate show RUNS --case ID`` (one case
across the conditions: input, answers, judge values and rationales, status, cost, latency;
with ``--trace`` the agent's recorded steps).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from eval_harness._util.safe_text import safe_stdout
from eval_harness.analysis.loading.browse import (
    RunInfo,
    SampleView,
    case_across_conditions,
    case_ids,
    list_runs,
    select_runs,
)
from eval_harness.cli.prog import prog
from eval_harness.trace.model import Trace
from eval_harness.trace.reader import read_trace
from eval_harness.trace.render import trace_lines


def _levels(levels: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in levels.items()) or "(no levels)"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUNS", help="run directories root(s), e.g. runs/<eval>/")
    p.add_argument("--condition", action="append", metavar="SPEC",
                   help="only conditions matching levels (model=a,effort=low) or an id prefix; repeatable")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("--debug", action="store_true", help="full tracebacks on errors")


def runs_parser() -> argparse.ArgumentParser:
    """Arguments of ``runs``."""
    p = argparse.ArgumentParser(prog=f"{prog()} runs",
                                description="List run directories: condition, levels, "
                                "replication, status and case counts.")
    _common(p)
    return p


def show_parser() -> argparse.ArgumentParser:
    """Arguments of ``show``."""
    p = argparse.ArgumentParser(prog=f"{prog()} show",
                                description="One case across the conditions: input, each answer, "
                                "each judge's value and rationale, status and error reason, cost, "
                                "latency.")
    _common(p)
    p.add_argument("--case", metavar="ID", help="the case to show (default: the first case id)")
    p.add_argument("--max-chars", type=int, default=1500, metavar="N",
                   help="cut each answer after N characters (0: never; default 1500)")
    p.add_argument("--trace", action="store_true",
                   help="also show each sample's trace (steps, nested; see docs/traces.md)")
    return p


def runs_main(argv: Sequence[str]) -> int:
    """Print one line per run and a total (run data neutralised: textsafe)."""
    with safe_stdout():
        return _runs(runs_parser().parse_args(list(argv)))


def _runs(args: argparse.Namespace) -> int:
    runs = select_runs(list_runs(args.runs), args.condition)
    if args.json:
        print(json.dumps([{**asdict(r), "path": str(r.path)} for r in runs], indent=2, default=str))
        return 0
    total: Counter[str] = Counter()
    for r in runs:
        total.update(r.counts)
    conditions = {r.condition_id for r in runs}
    reps = sorted({r.replication for r in runs})
    print(f"{len(runs)} run(s), {len(conditions)} condition(s), replications "
          f"{', '.join(map(str, reps))}; cases: {total['ok']} ok, {total['errored']} errored, "
          f"{total['incomplete']} incomplete")
    width = max(len(r.run_id) for r in runs)
    print(f"{'run id':<{width}}  {'condition':<12}  rep  {'status':<8}  {'ok':>4} {'err':>4} "
          f"{'inc':>4}  levels")
    for r in runs:
        c = r.counts
        print(f"{r.run_id:<{width}}  {r.condition_id:<12}  {r.replication:>3}  {r.status:<8}  "
              f"{c.get('ok', 0):>4} {c.get('errored', 0):>4} {c.get('incomplete', 0):>4}  "
              f"{_levels(r.levels)}")
    return 0


def _number(x: Any, unit: str = "", digits: int = 3) -> str:
    return "—" if x is None else f"{float(x):.{digits}g}{unit}"


def _cut(text: str, limit: int) -> str:
    if limit and len(text) > limit:
        return text[:limit] + f" … [{len(text) - limit} more characters]"
    return text


def _input_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _trace_of(v: SampleView) -> Trace | None:
    return read_trace(v.run.path / "cases" / v.case_id)


def _print_trace(v: SampleView, limit: int) -> None:
    trace = _trace_of(v)
    if trace is None:
        print("   trace: none stored (the run reported no steps, or ran with --no-trace)")
        return
    print(f"   trace: {sum(1 for _ in trace.walk())} step(s)")
    for line in trace_lines(trace, min(limit, 160) if limit else 0):
        print(f"     {line}")


def _print_sample(v: SampleView, limit: int, show_input: bool) -> None:
    r: RunInfo = v.run
    print(f"── {_levels(r.levels)}  [{r.condition_id}] r{r.replication}  {v.status}"
          f"  latency {_number(v.latency_s, ' s')}  cost {_number(v.cost_usd, ' USD')}"
          f"  composite {_number(v.composite)}")
    if v.reason:
        print(f"   error: {v.reason}")
    if show_input:
        print(f"   input: {_input_text(v.input)}")
    answer = "—" if v.output is None else _cut(v.output, limit)
    lines = answer.splitlines() or [""]
    print(f"   answer: {lines[0]}")
    for line in lines[1:]:
        print(f"           {line}")
    width = max((len(j.name) for j in v.judges), default=0)
    for j in v.judges:
        value = f"ERROR: {j.error or 'judge failed'}" if j.errored else str(j.value)
        why = f"  {j.rationale}" if j.rationale and not j.errored else ""
        print(f"   {j.name:<{width}}  {value}{why}")


def show_main(argv: Sequence[str]) -> int:
    """Print one case in every selected run (run data neutralised: textsafe)."""
    with safe_stdout():
        return _show(show_parser().parse_args(list(argv)))


def _show(args: argparse.Namespace) -> int:
    runs = select_runs(list_runs(args.runs), args.condition)
    known = case_ids(runs)
    case = args.case or (known[0] if known else "")
    views = case_across_conditions(runs, case)
    if args.json:
        print(json.dumps([{**asdict(v), "run": {**asdict(v.run), "path": str(v.run.path)},
                           **({"trace": _trace_json(v)} if args.trace else {})}
                          for v in views], indent=2, default=str))
        return 0
    inputs = {_input_text(v.input) for v in views}
    note = "" if args.case else f" (first of {len(known)} cases; choose one with --case ID)"
    print(f"case {case}: {len(views)} sample(s) in {len({v.run.condition_id for v in views})} "
          f"condition(s){note}")
    if len(inputs) == 1:
        print(f"input: {inputs.pop()}")
    for v in views:
        _print_sample(v, args.max_chars, show_input=len({_input_text(x.input) for x in views}) > 1)
        if args.trace:
            _print_trace(v, args.max_chars)
    return 0


def _trace_json(v: SampleView) -> dict[str, Any] | None:
    trace = _trace_of(v)
    return None if trace is None else trace.to_json()
