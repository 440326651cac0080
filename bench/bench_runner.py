#!/usr/bin/env python3
"""Engine throughput vs ``xargs -P 8``: 2,000 cells of ``true`` at concurrency 8.

Both sides run the same 2,000 processes (``true <case-id>``); the engine also writes the
full run-directory layout for every cell (input.json, stdout/stderr logs, command.json,
outputs.json, record.json via temp + rename) and keeps the resume index. Prints both
throughputs (cells/s) and the ratio engine/xargs (target >= 0.8).

    python bench/bench_runner.py [--cells 2000] [--concurrency 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
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


def bench_engine(cells: int, concurrency: int, base: str | None = None) -> float:
    """Seconds for the engine to run every cell (fresh runs directory under ``base``)."""
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        root = Path(tmp)
        exp = prepare(write_config(root, cells))
        opts = EngineOptions(runs_dir=root / "runs", concurrency=concurrency, progress="off")
        start = time.perf_counter()
        summary = execute(exp, None, opts)
        elapsed = time.perf_counter() - start
        if summary.ok != cells:
            raise SystemExit(f"engine: only {summary.ok} of {cells} cells ok")
        return elapsed


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


def cpu_per_cell(cells: int, concurrency: int) -> None:
    """CPU accounting: on a CPU-saturated machine the throughput ratio is bounded by
    xargs' CPU per cell over the engine's (own + children) CPU per cell."""
    a = _cpu()
    bench_xargs(cells, concurrency)
    b = _cpu()
    bench_engine(cells, concurrency, "/dev/shm" if Path("/dev/shm").is_dir() else None)
    c = _cpu()
    xargs_ms = (b[1] - a[1]) / cells * 1000
    own_ms, kids_ms = (c[0] - b[0]) / cells * 1000, (c[1] - b[1]) / cells * 1000
    print(f"CPU per cell: xargs {xargs_ms:.2f} ms; engine own {own_ms:.2f} ms + children "
          f"{kids_ms:.2f} ms -> CPU-bound ratio cap {xargs_ms / (own_ms + kids_ms):.2f} "
          f"on {os.cpu_count()} cores")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3, help="best of N for each side")
    p.add_argument("--runs-base", action="append", default=None, metavar="DIR",
                   help="where the engine's runs directory lives (repeatable; default: the "
                   "system temp dir and, when present, /dev/shm)")
    a = p.parse_args()
    bases = a.runs_base or [tempfile.gettempdir()] + (["/dev/shm"] if Path("/dev/shm").is_dir() else [])
    xs: list[float] = []
    es: dict[str, list[float]] = {b: [] for b in bases}
    for _ in range(a.repeat):  # alternate, so load drift hits both sides alike
        xs.append(bench_xargs(a.cells, a.concurrency))
        for b in bases:
            es[b].append(bench_engine(a.cells, a.concurrency, b))
    x = min(xs)
    print(f"cells={a.cells} concurrency={a.concurrency} (best of {a.repeat})")
    print(f"xargs -P {a.concurrency:<3}            : {x:7.2f} s  {a.cells / x:8.0f} cells/s")
    for b, times in es.items():
        e = min(times)
        print(f"engine (runs in {b:<10}): {e:7.2f} s  {a.cells / e:8.0f} cells/s  "
              f"ratio {x / e:.2f} (target >= 0.8)")
    print("(the engine also writes 6 files per cell; xargs writes none)")
    cpu_per_cell(a.cells, a.concurrency)
    print("load average after: {:.2f} {:.2f} {:.2f} (a shared machine skews both sides)"
          .format(*os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
