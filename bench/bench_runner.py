#!/usr/bin/env python3
"""Engine throughput vs ``xargs -P 8``: 2,000 cells of ``true`` at concurrency 8.

Both sides run the same 2,000 processes (``true <case-id>``); the engine also writes the
full run-directory layout for every cell (input.json, stdout/stderr logs, command.json,
outputs.json, record.json via temp + rename) and keeps the resume index. Prints both
throughputs (cells/s) and the ratio engine/xargs (target >= 0.8).

Every engine run writes into a fresh directory, and all of them are deleted only after the
last measurement: deleting 14,000 files right before a run would bill that run for the
deletion (on ext4 without a journal, each new inode is checked against recently deleted
ones, which made file creation 10-50x slower for about a minute). A probe of the cost of
creating a file is printed for each location, with a warning when it looks like that.

    python bench/bench_runner.py [--cells 2000] [--concurrency 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import EngineOptions, execute


def write_config(root: Path, cells: int) -> Path:
    """8 conditions x cells/8 cases, runner `true {case_id}`."""
    n_cases = cells // 8
    cases = [{"id": f"c{i:05d}", "input": {"q": i}} for i in range(n_cases)]
    (root / "cases.yaml").write_text(yaml.safe_dump(cases))
    cfg = {"name": "bench", "matrix": {"factors": {"a": [1, 2], "b": [1, 2], "c": [1, 2]}},
           "runner": {"type": "cli", "command": "true {case_id}"},
           "dataset": {"path": "cases.yaml"}, "execution": {"retries": 0}}
    path = root / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


#: directories made by this script, deleted at exit (after every measurement)
_MADE: list[str] = []


def _fresh_dir(base: str | None) -> Path:
    path = tempfile.mkdtemp(prefix="bench_runner_", dir=base)
    _MADE.append(path)
    return Path(path)


def bench_engine(cells: int, concurrency: int, base: str | None = None) -> float:
    """Seconds for the engine to run every cell (fresh runs directory under ``base``)."""
    root = _fresh_dir(base)
    exp = prepare(write_config(root, cells))
    opts = EngineOptions(runs_dir=root / "runs", concurrency=concurrency, progress="off")
    start = time.perf_counter()
    summary = execute(exp, None, opts)
    elapsed = time.perf_counter() - start
    if summary.ok != cells:
        raise SystemExit(f"engine: only {summary.ok} of {cells} cells ok")
    return elapsed


def create_cost_ms(base: str | None, n: int = 400) -> float:
    """Milliseconds to create (and close) one empty file under ``base``."""
    root = _fresh_dir(base)
    start = time.perf_counter()
    for i in range(n):
        os.close(os.open(root / f"f{i}", os.O_WRONLY | os.O_CREAT, 0o644))
    return (time.perf_counter() - start) / n * 1000


def bench_xargs(cells: int, concurrency: int) -> float:
    """Seconds for ``xargs -P`` to run the same commands."""
    true = shutil.which("true") or "true"
    ids = "".join(f"c{i % (cells // 8):05d}\n" for i in range(cells)).encode()
    start = time.perf_counter()
    subprocess.run(["xargs", "-P", str(concurrency), "-n", "1", true], input=ids, check=True)
    return time.perf_counter() - start


def _cpu() -> tuple[float, float]:
    """(own, children) CPU seconds so far (user + system)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def cpu_per_cell(cells: int, concurrency: int, base: str) -> str:
    """CPU accounting: on a CPU-saturated machine the throughput ratio is bounded by
    xargs' CPU per cell over the engine's (own + children) CPU per cell. (Kernel threads
    writing dirty pages back to disk are not counted on either side.)"""
    a = _cpu()
    bench_xargs(cells, concurrency)
    b = _cpu()
    bench_engine(cells, concurrency, base)
    c = _cpu()
    xargs_ms = (b[1] - a[1]) / cells * 1000
    own_ms, kids_ms = (c[0] - b[0]) / cells * 1000, (c[1] - b[1]) / cells * 1000
    return (f"xargs {xargs_ms:.2f} ms; engine own {own_ms:.2f} ms + children {kids_ms:.2f} ms "
            f"-> CPU-bound ratio cap {xargs_ms / (own_ms + kids_ms):.2f} on {os.cpu_count()} cores")


def fs_type(path: str) -> str:
    """Filesystem type of ``path`` (the longest matching mount point in /proc/mounts)."""
    real, best, kind = os.path.realpath(path), "", "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) < 3:
                continue
            mount = fields[1]
            inside = real == mount or real.startswith(mount.rstrip("/") + "/")
            if inside and len(mount) > len(best):
                best, kind = mount, fields[2]
    return kind


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3, help="best of N for each side")
    p.add_argument("--runs-base", action="append", default=None, metavar="DIR",
                   help="where the engine's runs directory lives (repeatable; default: "
                   "/dev/shm when present, then the system temp dir)")
    a = p.parse_args()
    shm = ["/dev/shm"] if Path("/dev/shm").is_dir() else []
    bases = a.runs_base or [*shm, tempfile.gettempdir()]
    try:
        return measure(a, bases)
    finally:
        for path in _MADE:
            shutil.rmtree(path, ignore_errors=True)


def measure(a: argparse.Namespace, bases: list[str]) -> int:
    """Alternate xargs and the engine, then print the table and the CPU accounting."""
    kinds = {b: fs_type(b) for b in bases}
    for b in bases:
        ms = create_cost_ms(b)
        note = ("  <- slow: this filesystem is still paying for recently deleted files "
                "(wait three minutes and rerun)" if ms > 0.1 else "")
        print(f"creating one file in {b} ({kinds[b]}): {ms:.3f} ms{note}")
    xs: list[float] = []
    es: dict[str, list[float]] = {b: [] for b in bases}
    for _ in range(a.repeat):  # alternate, so load drift hits both sides alike
        xs.append(bench_xargs(a.cells, a.concurrency))
        for b in bases:
            es[b].append(bench_engine(a.cells, a.concurrency, b))
    x = min(xs)
    print(f"cells={a.cells} concurrency={a.concurrency} (best of {a.repeat})")
    print(f"{'xargs -P ' + str(a.concurrency):<34}: {x:6.2f} s {a.cells / x:7.0f} cells/s")
    for b, times in es.items():
        e = min(times)
        label = f"engine, runs in {b} ({kinds[b]})"
        print(f"{label:<34}: {e:6.2f} s {a.cells / e:7.0f} cells/s  ratio {x / e:.2f}")
    print("target: ratio >= 0.8 with the runs directory in memory (tmpfs), which measures the\n"
          "engine itself; on a disk the ratio also carries the filesystem's cost of the files\n"
          "the engine writes per cell (a folder, input/command/outputs/record JSON, two logs;\n"
          "xargs writes none)")
    for b in bases:
        print(f"CPU per cell, runs in {b}: {cpu_per_cell(a.cells, a.concurrency, b)}")
    print("load average after: {:.2f} {:.2f} {:.2f} (a shared machine skews both sides)"
          .format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
