"""Run directories → one tidy DataFrame (docs/api.md, the tidy frame), fast.

`load_runs(path | [paths])` walks every root for run directories (`discover`), reads this
tool's `run.json` / `condition.json` + `cases/*/record.json` (`native`) and every other
registered run format's runs (`formats`; agent-eval-harness's is registered by the
application layer), and returns one row per (run, case, judge) plus one `composite` row
per sample.

Rules
- A run without recorded levels is listed in `attrs["issues"]` and left out (never a
  condition). So is a run whose factor names differ from the others' (the factor set
  most runs share, or the config's, wins).
- The same (condition, replication, case) loaded twice is counted once: identical copies
  are *duplicates*, differing ones *conflicts* resolved to the newest (`collect`).
- Composite: the record's own when present; otherwise formed from `judge_specs` (a
  config's judges), or, without a config, only from judges normalisable from the data
  (`composite`); else NaN and noted — the judges are then analysed on their own.

Speed: plain `json` on each record, column lists, one DataFrame at the end (per-run and
per-sample columns are expanded with numpy indexing, never per-row pandas operations).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from eval_harness.analysis.frame_attrs import SharedDict, SharedList
from eval_harness.analysis.loading.collect import Collector
from eval_harness.analysis.loading.discover import RunDir, find_run_dirs
from eval_harness.analysis.loading.formats import NATIVE, RunFormat, formats, get_format
from eval_harness.analysis.loading.native import read_native_cases, read_native_run
from eval_harness.analysis.loading.packed import Packed
from eval_harness.analysis.loading.runfiles import UnreadableRun, levels_key
from eval_harness.judges.composite import JudgeSpec, coerce_judge_specs

MAX_WORKERS = 4
PARALLEL_MIN_RUNS = 8
#: other formats' run files (total bytes, `RunFormat.size`) worth worker processes
PARALLEL_MIN_BYTES = 2 * 1024 * 1024
COLUMNS_HEAD = ["eval", "run_id", "condition_id"]
COLUMNS_TAIL = [
    "replication", "case_id", "judge", "value", "kind", "errored", "case_status",
    "latency_s", "cost_usd", "tokens", "tool_calls", "case_hash", "normalized",
]


def _sort_key(x: Any) -> tuple[int, Any]:
    if isinstance(x, (int, float)):
        return (0, x)
    return (1, str(x))


def _choose_factors(
    runs: list[dict[str, Any]], factor_levels: Mapping[str, Sequence[Any]] | None
) -> list[str]:
    if factor_levels:
        return list(factor_levels)
    sets = Counter(frozenset(r["levels"]) for r in runs)
    if not sets:
        return []
    best = max(sets.values())
    for r in runs:  # first run whose factor set is the most common one gives the order
        if sets[frozenset(r["levels"])] == best:
            return list(r["levels"])
    return []  # pragma: no cover


def _level_order(
    runs: list[dict[str, Any]], factors: list[str], factor_levels: Mapping[str, Sequence[Any]] | None
) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for f in factors:
        seen: list[Any] = []
        for r in runs:
            v = r["levels"][f]
            if v not in seen:
                seen.append(v)
        # a config variant level is recorded by its name
        given = [getattr(v, "name", v) if hasattr(v, "set") else v
                 for v in (factor_levels or {}).get(f, [])]
        rest = sorted((v for v in seen if v not in given), key=_sort_key)
        out[f] = [v for v in given if v in seen] + rest
    return out


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may use
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker initializer: on Linux the kernel kills this worker when the analysing process
    dies (SIGKILL, OOM), so no parse worker outlives it; elsewhere pool shutdown does."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl took effect
        os._exit(1)


class _Workers:
    """Runs read jobs and yields their results in submission order — in worker processes
    (one pool, started on first use) when a phase is large enough, else in this process.
    A job's exception is re-raised by the consumer as it would be sequentially."""

    def __init__(self, workers: int | None) -> None:
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None

    def count(self, n_jobs: int, large: bool) -> int:
        """Processes for a phase of ``n_jobs`` (1: in this process). ``workers`` given:
        that many; else up to the CPUs (and MAX_WORKERS, two jobs each) when ``large``."""
        if self.workers is not None:
            return max(1, min(self.workers, n_jobs))
        if not large:
            return 1
        return max(1, min(_cpus(), MAX_WORKERS, n_jobs // 2))

    def map(self, fn: Callable[..., Any], jobs: list[tuple[Any, ...]], n: int) -> Iterator[Any]:
        if n <= 1:
            for job in jobs:
                yield fn(*job)
            return
        if self.pool is None:
            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            self.pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx,
                                            initializer=_die_with_parent,
                                            initargs=(os.getpid(),))
        futures = deque(self.pool.submit(fn, *job) for job in jobs)
        while futures:  # a result handed over is no longer held here (its memory can go)
            yield futures.popleft().result()

    def close(self, kill: bool = False) -> None:
        """Shut the pool down; ``kill``: stop the workers now (Ctrl-C, SIGTERM, an error),
        rather than waiting for the jobs they are running."""
        if self.pool is None:
            return
        if kill:
            for proc in list((getattr(self.pool, "_processes", None) or {}).values()):
                with contextlib.suppress(OSError, AttributeError):
                    proc.kill()
        self.pool.shutdown(wait=not kill, cancel_futures=True)
        self.pool = None


def _read_other(fmt: RunFormat, run_dir: str, state: Any, specs: Any) -> Any:
    """A job: one run directory of a registered format (in a worker process, or here)."""
    return fmt.read_run(run_dir, state, specs)


def load_runs(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    judge_specs: Any = None,
    factor_levels: Mapping[str, Sequence[Any]] | None = None,
    workers: int | None = None,
    format_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Load every run directory under `path` (one root or several) into a tidy frame.

    `judge_specs`: an `EvalConfig`, its `judges` list, or {judge: {score_range, gate,
    weight}} — used to form a composite where a record has none and to normalise.
    `factor_levels`: the config's `matrix.factors` {factor: [levels or variants]} (writing
    order of factors and levels); without it factors come from the recorded levels.
    `workers`: processes reading run files (default: up to 4 CPUs when there are at least
    8 native runs, or other formats' run files of 2 MB or more; 1 = in this process).
    The result does not depend on it.
    `format_options`: {format name: {option: value}} for registered run formats
    (`formats.RunFormat.prepare`); a ValueError names an unknown format or a bad option.
    """
    roots = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    specs = coerce_judge_specs(judge_specs)
    chosen = dict(format_options or {})
    known = {f.name for f in formats()}
    unknown = sorted(set(chosen) - known)
    if unknown:
        raise ValueError(f"no run format named {', '.join(map(repr, unknown))} (registered: "
                         f"{', '.join(sorted(known))})")
    states = {f.name: f.prepare(judge_specs, chosen.get(f.name) or {})
              for f in formats() if f.name != NATIVE}
    pool = _Workers(workers)
    try:
        return _load(roots, specs, states, factor_levels, pool)
    except BaseException:  # interrupted (SIGTERM is a KeyboardInterrupt) or failed
        pool.close(kill=True)
        raise
    finally:
        pool.close()


def _load(
    roots: list[str | os.PathLike[str]], specs: Mapping[str, JudgeSpec] | None,
    states: Mapping[str, Any], factor_levels: Mapping[str, Sequence[Any]] | None, pool: _Workers,
) -> pd.DataFrame:
    col = Collector(specs)
    issues: list[dict[str, Any]] = []
    metas: list[tuple[RunDir, dict[str, Any], Packed | None]] = []
    outside: list[str] = []
    run_dirs = find_run_dirs(roots, outside)
    # other formats' runs are read whole (metadata and samples), in workers when large
    jobs = [(get_format(rd.layout), rd.path, states[rd.layout], specs)
            for rd in run_dirs if rd.layout != NATIVE]
    large = sum(fmt.size(p) for fmt, p, _, _ in jobs) >= PARALLEL_MIN_BYTES
    others = pool.map(_read_other, jobs, pool.count(len(jobs), large))
    for rd in run_dirs:
        try:
            if rd.layout == NATIVE:
                metas.append((rd, read_native_run(rd.path), None))
            else:
                got = next(others)
                if isinstance(got, UnreadableRun):
                    raise got
                metas.append((rd, *got))
        except UnreadableRun as exc:
            issues.append({"kind": "unreadable_run", "detail": f"run {rd.path}: {exc}; left out"})
    usable = []
    for rd, run, read in metas:
        if not isinstance(run["levels"], dict) or not run["levels"]:
            issues.append({"kind": "no_levels", "detail": f"run {rd.path}: no recorded levels; left out"})
        else:
            usable.append((rd, run, read))
    factors = _choose_factors([r for _, r, _ in usable], factor_levels)
    kept = []
    for rd, run, read in usable:
        if set(run["levels"]) != set(factors):
            issues.append({"kind": "inconsistent_factors", "detail": (
                f"run {rd.path}: levels for {sorted(run['levels'])} but the analysis uses "
                f"factors {factors}; left out")})
        else:
            kept.append((rd, run, read))
    for fmt in formats():
        if fmt.name != NATIVE:
            fmt.number_replications([run for rd, run, _ in kept if rd.layout == fmt.name])
    native: list[tuple[Any, ...]] = []
    for rd, run, read in kept:
        run["path"] = rd.path
        run["levels_key"] = levels_key(run["levels"])
        if read is None:
            native.append((rd.path, run["replication"], str(run.get("finished_at") or ""), specs))
    chunks = pool.map(read_native_cases, native,
                      pool.count(len(native), len(native) >= PARALLEL_MIN_RUNS))
    for i, (rd, run, read) in enumerate(kept):
        idx = col.add_run(run)
        if read is None:
            part = next(chunks)
        else:  # other formats' samples carry the run's replication (numbered above)
            part = read
            part.s_rep[:] = run["replication"]
        col.add_chunk(idx, part)
        kept[i] = (rd, run, None)  # the collector holds the columns now
        if not len(part):
            issues.append({"kind": "empty_run", "detail": f"run {rd.path}: no case records"})
    del metas, usable
    col.finish()
    issues.extend({"kind": "outside_root", "detail": d} for d in outside)
    issues.extend(col.issues())
    issues.extend({"kind": "unreadable_record", "detail": f"{p}; skipped"}
                  for p in col.bad_records)
    if col.bad_values:
        shown = "; ".join(col.bad_values[:10]) + (" ..." if len(col.bad_values) > 10 else "")
        issues.append({"kind": "non_finite_value", "count": len(col.bad_values), "detail": (
            f"{len(col.bad_values)} judge value(s) are Infinity, NaN, beyond ±1e150 or off "
            f"their scale: counted as errored samples (never a score): {shown}")})
    levels = _level_order([r for _, r, _ in kept], factors, factor_levels)
    frame = _assemble(col, factors)
    for fmt in formats():
        if fmt.name != NATIVE:
            issues.extend(fmt.notes([r for r in col.runs if r.get("format") == fmt.name],
                                    states[fmt.name]))
    composite_note = _composite_note(col, specs is not None)
    if composite_note:
        issues.append({"kind": "composite", "detail": composite_note})
    frame.attrs["factors"] = factors
    frame.attrs["levels"] = levels
    # large values shared, not deep-copied by every pandas operation (analysis.frame_attrs)
    frame.attrs["issues"] = SharedList(issues)
    frame.attrs["case_tags"] = SharedDict(col.case_tags)
    frame.attrs["run_costs"] = SharedList(
        {"run_id": r["run_id"], "condition_id": r["condition_id"], "cost_usd": r["cost_usd"]}
        for r in col.runs if r.get("cost_usd") is not None
    )
    frame.attrs["formats"] = sorted({r["format"] for r in col.runs})
    return frame


def _composite_note(col: Collector, have_specs: bool) -> str | None:
    if col.composite_unknown_runs:
        runs = sorted(col.composite_unknown_runs)
        shown = ", ".join(runs[:5]) + (" ..." if len(runs) > 5 else "")
        hint = "a judge is missing from the config or has no score_range" if have_specs else (
            "a numeric judge has no recorded score_range; pass the eval's config (--config)")
        return f"composite not available for some samples (runs {shown}): {hint}; judges are analysed on their own"
    if col.composite_inferred:
        return ("composite formed without a config: booleans 0/1 and numbers by their recorded "
                "score range, equal weights, no gates")
    return None


def _obj(values: list[Any]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _expand(values: list[Any] | np.ndarray, index: np.ndarray, *, strings: bool = False) -> Any:
    """``values[index]`` as the column pandas would build from it, converting each distinct
    value once instead of once per row (pandas turns an object array of str into its
    string dtype element by element). Only the values ``index`` uses decide the dtype, as
    before. ``strings``: every value is a str, so equal ones may be merged first."""
    arr = values if isinstance(values, np.ndarray) else _obj(list(values))
    if not len(index):
        return arr[index]
    if strings:
        codes, uniques = pd.factorize(arr)
        index = codes[index]
        arr = np.asarray(uniques, dtype=object)
    present = np.bincount(index, minlength=len(arr)) > 0
    if not present.all():
        index = (np.cumsum(present) - 1)[index]
        arr = arr[present]
    cat = _categorical(arr, index)
    if cat is not None:
        return cat
    small = pd.Series(arr, copy=False)
    if isinstance(small.dtype, np.dtype):
        return small.to_numpy()[index]
    return small.array.take(index)


def _categorical(arr: np.ndarray, index: np.ndarray) -> pd.Categorical | None:
    """``arr[index]`` as a Categorical with lexically sorted categories when every value of
    ``arr`` is a str (None/NaN → missing), else None. Codes are 1–2 bytes per row instead
    of a string per row, and sorting by the column keeps lexical order."""
    if arr.dtype != object or not len(arr):
        return None
    codes, uniques = pd.factorize(arr, sort=False)  # NaN/None → -1
    values = np.asarray(uniques, dtype=object)
    if not len(values) or not all(type(v) is str for v in values):
        return None
    order = np.argsort(values, kind="stable")
    rank = np.empty(len(values) + 1, dtype=np.int64)
    rank[order] = np.arange(len(values))
    rank[-1] = -1  # code -1 (missing) indexes the last slot
    width = np.int8 if len(values) < 127 else np.int16 if len(values) < 32767 else np.int32
    return pd.Categorical.from_codes(rank[codes[index]].astype(width),
                                     categories=pd.Index(values[order]))


def _assemble(col: Collector, factors: list[str]) -> pd.DataFrame:
    """Expand per-run and per-sample columns onto rows with numpy indexing, releasing
    each collected column once it is expanded (the peak stays near the frame's size)."""
    r_sample = np.asarray(col.r_sample, dtype=np.int64)
    alive = np.asarray(col.alive, dtype=bool)
    keep = alive[r_sample] if len(r_sample) else np.zeros(0, dtype=bool)
    every = bool(keep.all())
    rs = r_sample if every else r_sample[keep]
    s_run = np.asarray(col.s_run, dtype=np.int64)
    run_of_row = s_run[rs] if len(rs) else np.zeros(0, dtype=np.int64)
    rows = np.arange(len(keep)) if every else np.flatnonzero(keep)

    def take(name: str, index: np.ndarray | None, dtype: Any = None, strings: bool = False) -> Any:
        values = getattr(col, name)
        setattr(col, name, None)
        if strings:
            return _expand(values, rows if index is None else index, strings=True)
        values = np.asarray(values, dtype=dtype)
        if index is None:  # a row column
            return values if every else values[keep]
        return values[index]

    data: dict[str, Any] = {}
    for name in COLUMNS_HEAD:
        data[name] = _expand([r[name] for r in col.runs], run_of_row)
    for f in factors:
        data[f] = _expand([r["levels"][f] for r in col.runs], run_of_row)
    del run_of_row
    data["replication"] = take("s_rep", rs, np.int64)
    data["case_id"] = take("s_case", rs, strings=True)
    data["judge"] = take("r_judge", None, strings=True)
    data["value"] = take("r_value", None, float)
    data["kind"] = take("r_kind", None, strings=True)
    data["errored"] = take("r_err", None, bool)
    data["case_status"] = take("s_status", rs, strings=True)
    data["latency_s"] = take("s_latency", rs, float)
    data["cost_usd"] = take("s_cost", rs, float)
    data["tokens"] = take("s_tokens", rs, float)
    data["tool_calls"] = take("s_tools", rs, float)
    data["case_hash"] = take("s_hash", rs, strings=True)
    data["normalized"] = take("r_norm", None, float)
    # copy=False: no second copy of the numeric columns while blocks are consolidated
    return pd.DataFrame(data, columns=[*COLUMNS_HEAD, *factors, *COLUMNS_TAIL], copy=False)
