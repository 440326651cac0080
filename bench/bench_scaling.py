"""Benchmark: does any analysis phase grow faster than the data? (issue 14, docs/performance.md)

Runs ``orchestrate --analyze-only RUNS --config eval.yaml --per-judge --timings`` as a
child process on synthetic run sets (bench/scale_data.py: a boolean gate judge and a 1–5
judge) of growing size and prints, per phase of ``timings.json``, **milliseconds of CPU
per sample** (sample = condition × case × replication) at each size, then its growth from
the smallest to the largest size. A phase whose ms/sample grows more than ``--max-growth``
(1.5×) is flagged ``SUPERLINEAR`` (phases under ``--min-seconds`` at the largest size are
marked ``small`` instead: their ratio is noise). The ``total`` row is the whole child
process (interpreter start, imports and config included: CPU from ``os.wait4``); fixed
costs make ms/sample fall with size, which is fine.

Series (``--series``, default all):

- ``cases``: 500 → 20,000 cases at 16 conditions (agent-eval-harness layout);
- ``conditions``: 4 → 64 conditions at 2,000 cases (64 conditions is 6 two-level factors:
  63 ANOVA terms against 3 at 4 conditions, so the ANOVA itself may legitimately grow);
- ``tags``: 500 → 5,000 cases at 16 conditions in this tool's layout (the only one with
  case tags) without and with tags (``tier`` and ``cluster`` per case); besides each
  series' growth it prints the with/without ratio per size and flags it when it grows
  (tags made grouping quadratic once);
- ``missing``: 500 → 20,000 cases at 16 conditions with ``--missing`` (2 %) of the
  condition × case cells errored in every replication (agent-eval-harness layout): the
  cases then miss cells, so ``method: auto`` fits the mixed model (docs/statistics.md
  §3.3) for the composite and for each judge, the path whose cost must stay linear in
  cases (issue 23);
- ``million``: 1M judge values end to end against the targets (≤ 60 s wall, ≤ 2 GB peak
  RSS): 16 conditions × 10,417 cases × 3 replications × 2 judges = 1,000,032 values
  (500,016 samples), agent-eval-harness layout.

Peak RSS is the analysis process's own peak (``VmHWM``, from timings.json) and, on
Linux, the sampled peak of the whole process tree (worker processes included: their RSS
summed every 50 ms, so shared pages count twice: an upper bound).

Generated run sets go to a temporary directory (deleted after each size) or, with
``--keep DIR``, to ``DIR/<layout>-<C>x<N>x<R>[-tags]/`` and are reused on the next run.
Exit status 1 when a phase is flagged or the 1M targets are missed.

Quick look (about a minute):
    python bench/bench_scaling.py --series cases,conditions --cases 500,2000 \\
        --conditions 4,16 --cases-at 500
Everything (tens of minutes; a few GB of runs):
    python bench/bench_scaling.py --keep /tmp/scale
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_data

REPO = Path(__file__).resolve().parent.parent
SERIES = ("cases", "conditions", "tags", "missing", "million")
MILLION = (16, 10_417, 3)  # × 2 judges = 1,000,032 judge values
WALL_TARGET_S = 60.0
RSS_TARGET_MIB = 2e9 / 2**20  # 2 GB
OTHER, BEFORE = "(other)", "(start-up, config)"  # rows from timings.json's totals


class Size(NamedTuple):
    """One synthetic run set."""

    layout: str
    conditions: int
    cases: int
    reps: int = 1
    tags: bool = False
    missing: float = 0.0  #: fraction of condition × case cells with no sample (errored)

    @property
    def samples(self) -> int:
        """Samples written (the missing cells are drawn at random: this is their expectation)."""
        return round(self.conditions * self.cases * self.reps * (1.0 - self.missing))

    @property
    def label(self) -> str:
        return (f"{self.conditions}x{self.cases}x{self.reps}" + ("+tags" if self.tags else "")
                + (f"-{self.missing:g}" if self.missing else ""))

    @property
    def folder(self) -> str:
        return (f"{self.layout}-{self.conditions}x{self.cases}x{self.reps}"
                + ("-tags" if self.tags else "")
                + (f"-missing{self.missing:g}" if self.missing else ""))


@dataclass
class Result:
    """One measured analysis."""

    size: Size
    cpu_s: float  #: user + system of the child and its reaped workers
    wall_s: float
    exit_code: int
    timings: dict[str, Any] = field(default_factory=dict)
    tree_peak_mib: float | None = None  #: sampled RSS sum of the process tree

    @property
    def peak_mib(self) -> float | None:
        """The analysis process's own peak RSS (timings.json), or the sampled tree peak."""
        own = self.timings.get("total", {}).get("peak_rss_mib")
        peaks = [p for p in (own, self.tree_peak_mib) if p is not None]
        return max(peaks) if peaks else None

    def seconds(self, path: str, metric: str) -> float | None:
        """A phase's seconds; ``(other)``: inside the analysis but in no phase; ``(start-up,
        config)``: CPU before the analysis clock started."""
        total = self.timings.get("total", {})
        if path == OTHER:
            value = total.get("unphased_" + metric)
            return None if value is None else float(value)
        if path == BEFORE:
            value = total.get("cpu_before_s") if metric == "cpu_s" else None
            return None if value is None else float(value)
        for p in self.timings.get("phases", []):
            if p["path"] == path:
                return float(p[metric])
        return None

    def ms_per_sample(self, path: str, metric: str) -> float | None:
        value = self.seconds(path, metric)
        return None if value is None else 1000.0 * value / self.size.samples


def dataset(size: Size, keep: Path | None, scratch: Path) -> Path:
    """The run set's folder (``bench/`` runs, written unless kept, + ``eval.yaml``, always
    rewritten so a kept run set is analysed with the current config)."""
    root = (keep or scratch) / size.folder
    done = root / ".complete"
    if not done.is_file():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        t0 = time.perf_counter()
        scale_data.write_runs(str(root), size.layout, size.conditions, size.cases, size.reps,
                              judges=2, tags=size.tags, missing=size.missing)
        done.write_text("")
        print(f"  wrote {size.label} ({size.samples:,} samples, {size.layout} layout) in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    config = scale_data.config_text(size.conditions, 2, size.reps, layout=size.layout)
    (root / "eval.yaml").write_text(config)
    return root


def _tree_rss_mib(pid: int) -> float:
    """RSS (MiB) of ``pid`` and its descendants, from /proc (0 where unreadable)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"VmRSS:"):
                        total += int(line.split()[1]) / 1024
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def analyse(size: Size, root: Path) -> Result:
    """Run the analysis in a child process; CPU from wait4, peak RSS sampled alongside."""
    out = root / "out"
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, str(REPO / "orchestrate.py"), "--analyze-only", str(root / "bench"),
            "--config", str(root / "eval.yaml"), "--output", str(out), "--per-judge",
            "--timings"]
    with open(root / "stderr.txt", "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        peak = [0.0]
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(0.05):
                peak[0] = max(peak[0], _tree_rss_mib(proc.pid))

        watcher = threading.Thread(target=watch, daemon=True)
        if sys.platform.startswith("linux"):
            watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        stop.set()
        proc.returncode = os.waitstatus_to_exitcode(status)
    code = proc.returncode
    result = Result(size, usage.ru_utime + usage.ru_stime, wall, code,
                    tree_peak_mib=peak[0] or None)
    if code not in (0, 1):
        tail = (root / "stderr.txt").read_text(errors="replace")[-1500:]
        print(f"  {size.label}: analysis exited {code}:\n{tail}", flush=True)
        return result
    result.timings = json.loads((out / "timings.json").read_text())
    return result


def measure(sizes: Sequence[Size], keep: Path | None) -> list[Result]:
    results = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-scaling-") as scratch:
            root = dataset(size, keep, Path(scratch))
            res = analyse(size, root)
        peak = f"{res.peak_mib:.0f} MiB" if res.peak_mib is not None else "?"
        print(f"  {size.label:>16}: {res.cpu_s:7.1f} CPU-s  {res.wall_s:7.1f} s wall  peak {peak}"
              f"  {1000 * res.cpu_s / size.samples:7.3f} ms CPU/sample", flush=True)
        results.append(res)
    return results


def table(title: str, results: list[Result], metric: str, max_growth: float,
          min_seconds: float) -> list[str]:
    """Print ms/sample per phase and size with each phase's growth; return flagged names."""
    ok = [r for r in results if r.timings]
    if len(ok) < 2:
        print(f"{title}: fewer than two sizes measured, no growth to judge")
        return []
    paths: list[str] = []
    depth: dict[str, int] = {}
    for r in ok:
        for p in r.timings["phases"]:
            if p["path"] not in depth:
                paths.append(p["path"])
                depth[p["path"]] = p["depth"]
    paths += [OTHER, BEFORE]
    depth[OTHER] = depth[BEFORE] = 0
    width = max(20, *(len(p) + 2 * depth[p] for p in paths))
    unit = "CPU" if metric == "cpu_s" else "wall"
    print(f"\n{title}: ms {unit} per sample")
    print(f"{'phase':<{width}}" + "".join(f"{r.size.label:>16}" for r in ok) + "   growth")
    flagged = []
    for path in paths:
        vals = [r.ms_per_sample(path, metric) for r in ok]
        first, last = vals[0], vals[-1]
        growth = last / first if first and last is not None else None
        mark = ""
        if growth is not None and growth > max_growth:
            small = (ok[-1].seconds(path, metric) or 0.0) < min_seconds
            mark = "  small" if small else "  SUPERLINEAR"
            if not small:
                flagged.append(f"{title}: {path} x{growth:.2f}")
        name = "  " * depth[path] + path.rsplit("/", 1)[-1]
        cells = "".join(f"{v:16.4f}" if v is not None else f"{'-':>16}" for v in vals)
        shown = f"{growth:7.2f}x" if growth is not None else f"{'-':>8}"
        print(f"{name:<{width}}{cells}  {shown}{mark}")
    totals = [1000 * (r.cpu_s if metric == "cpu_s" else r.wall_s) / r.size.samples for r in ok]
    print(f"{'total (process)':<{width}}" + "".join(f"{v:16.4f}" for v in totals)
          + f"  {totals[-1] / totals[0]:7.2f}x")
    print(f"{'peak RSS MiB':<{width}}" + "".join(
        f"{r.peak_mib:16.0f}" if r.peak_mib is not None else f"{'?':>16}" for r in ok))
    return flagged


def tag_ratio(plain: list[Result], tagged: list[Result], max_growth: float) -> list[str]:
    """With/without tags CPU per size; flagged when the ratio grows with size."""
    pairs = [(a, b) for a, b in zip(plain, tagged, strict=True) if a.timings and b.timings]
    if not pairs:
        return []
    print("\ntags: CPU with tags / without, per size")
    ratios = []
    for a, b in pairs:
        ratios.append(b.cpu_s / a.cpu_s)
        print(f"  {a.size.cases:>7,} cases: {ratios[-1]:5.2f}x")
    growth = ratios[-1] / ratios[0]
    if len(ratios) >= 2 and growth > max_growth:
        print(f"  SUPERLINEAR: the cost of tags grows {growth:.2f}x with size")
        return [f"tags: with/without ratio x{growth:.2f}"]
    return []


def million(keep: Path | None, layout: str) -> list[str]:
    conditions, cases, reps = MILLION
    size = Size(layout, conditions, cases, reps)
    print(f"\n1M judge values: {conditions} conditions x {cases:,} cases x {reps} replications "
          f"x 2 judges = {size.samples * 2:,} values ({size.samples:,} samples)", flush=True)
    (res,) = measure([size], keep)
    peak = res.peak_mib if res.peak_mib is not None else float("nan")
    wall_ok = res.exit_code in (0, 1) and res.wall_s <= WALL_TARGET_S
    rss_ok = res.exit_code in (0, 1) and peak <= RSS_TARGET_MIB
    print(f"  wall {res.wall_s:.1f} s (target <= {WALL_TARGET_S:.0f} s): "
          f"{'PASS' if wall_ok else 'FAIL'};  CPU {res.cpu_s:.1f} s")
    print(f"  peak RSS {peak:.0f} MiB = {peak * 2**20 / 1e9:.2f} GB (target <= 2 GB): "
          f"{'PASS' if rss_ok else 'FAIL'}")
    return [] if wall_ok and rss_ok else ["1M judge values: target missed"]


def _ints(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", default=",".join(SERIES),
                    help=f"comma-separated, of {', '.join(SERIES)} (default all)")
    ap.add_argument("--cases", default="500,2000,5000,20000",
                    help="case counts of the cases series (default 500,2000,5000,20000)")
    ap.add_argument("--conditions-at", type=int, default=16,
                    help="conditions of the cases and tags series (default 16)")
    ap.add_argument("--conditions", default="4,16,64",
                    help="condition counts of the conditions series (default 4,16,64)")
    ap.add_argument("--cases-at", type=int, default=2000,
                    help="cases of the conditions series (default 2000)")
    ap.add_argument("--tag-cases", default="500,2000,5000",
                    help="case counts of the tags series (default 500,2000,5000)")
    ap.add_argument("--missing-cases", default="500,2000,5000,20000",
                    help="case counts of the missing series (default 500,2000,5000,20000)")
    ap.add_argument("--missing", type=float, default=0.02,
                    help="fraction of cells errored in the missing series (default 0.02)")
    ap.add_argument("--layout", default="aeh", choices=("aeh", "native"),
                    help="layout of the cases, conditions, missing and million series "
                    "(default aeh)")
    ap.add_argument("--metric", default="cpu_s", choices=("cpu_s", "wall_s"),
                    help="per-phase number shown (default CPU: the machine may be shared)")
    ap.add_argument("--max-growth", type=float, default=1.5,
                    help="flag a phase whose ms/sample grows more than this (default 1.5)")
    ap.add_argument("--min-seconds", type=float, default=0.2,
                    help="phases shorter than this at the largest size are not flagged")
    ap.add_argument("--keep", type=Path, default=None,
                    help="write run sets under this directory and reuse them")
    args = ap.parse_args()
    series = [s.strip() for s in args.series.split(",") if s.strip()]
    unknown = set(series) - set(SERIES)
    if unknown:
        ap.error(f"unknown series {', '.join(sorted(unknown))}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{sys.executable}", flush=True)
    flagged: list[str] = []
    common = {"metric": args.metric, "max_growth": args.max_growth,
              "min_seconds": args.min_seconds}
    if "cases" in series:
        print(f"\ncases series ({args.conditions_at} conditions, {args.layout} layout)")
        sizes = [Size(args.layout, args.conditions_at, n) for n in _ints(args.cases)]
        flagged += table("cases", measure(sizes, args.keep), **common)
    if "conditions" in series:
        print(f"\nconditions series ({args.cases_at:,} cases, {args.layout} layout)")
        sizes = [Size(args.layout, c, args.cases_at) for c in _ints(args.conditions)]
        flagged += table("conditions", measure(sizes, args.keep), **common)
    if "tags" in series:
        print(f"\ntags series ({args.conditions_at} conditions, native layout)")
        counts = _ints(args.tag_cases)
        plain = measure([Size("native", args.conditions_at, n) for n in counts], args.keep)
        tagged = measure([Size("native", args.conditions_at, n, tags=True) for n in counts],
                         args.keep)
        flagged += table("no tags", plain, **common)
        flagged += table("tags", tagged, **common)
        flagged += tag_ratio(plain, tagged, args.max_growth)
    if "missing" in series:
        if not 0.0 < args.missing < 1.0:
            ap.error(f"--missing must be a fraction in (0, 1), not {args.missing}")
        print(f"\nmissing series ({args.conditions_at} conditions, {args.missing:.0%} of cells "
              f"errored, {args.layout} layout)")
        sizes = [Size(args.layout, args.conditions_at, n, missing=args.missing)
                 for n in _ints(args.missing_cases)]
        flagged += table("missing", measure(sizes, args.keep), **common)
    if "million" in series:
        flagged += million(args.keep, args.layout)
    print("\n" + ("flagged: " + "; ".join(flagged) if flagged else "nothing flagged"))
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
