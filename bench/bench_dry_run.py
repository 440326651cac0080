"""Planning and help start-up cost against issue 14's targets (docs/performance.md).

- ``orchestrate --dry-run --json`` of 10^6 runs (1,000 conditions = 10 × 10 × 10 levels,
  × 1,000 cases × 1 replication): **≤ 1 CPU-s in total**, interpreter start and imports
  included;
- ``orchestrate --help``: **≤ 0.3 s wall**.

Each command runs as a fresh child process (``python orchestrate.py ...``) ``--repeat``
times; CPU is user + system of the child (``getrusage(RUSAGE_CHILDREN)`` deltas). The
minimum is the number to compare (the least disturbed by other work on a shared machine);
the median is printed beside it. For context it also times a bare interpreter start and
the imports alone (``import eval_harness.cli.dry_run``); ``python -X importtime
orchestrate.py ...`` shows module by module what a start-up imports.

Exit status 1 when a target is missed.
Run: python bench/bench_dry_run.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRY_RUN_CPU_S = 1.0
HELP_WALL_S = 0.3


def write_design(tmp: Path, levels: int = 10, cases: int = 1000) -> Path:
    """An eval.yaml with ``levels``³ conditions over ``cases`` cases (10⁶ runs by default)."""
    with (tmp / "cases.jsonl").open("w") as fh:
        for i in range(cases):
            fh.write(json.dumps({"id": f"case-{i:05d}", "input": {"question": f"q{i}"}}) + "\n")
    lv = ", ".join(f"l{i}" for i in range(levels))
    cfg = f"""\
name: big
matrix:
  factors:
    model: [{lv}]
    effort: [{lv}]
    context: [{lv}]
runner:
  type: cli
  command: "agent --model {{model}} --effort {{effort}} --context {{context}} {{question}}"
dataset:
  path: cases.jsonl
judges:
  - name: ok
    check: "return True, 'ok'"
"""
    path = tmp / "eval.yaml"
    path.write_text(cfg)
    return path


def measure(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """(CPU s, wall s, stdout) of one child process; exits on a failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout


def series(argv: list[str], cwd: Path, repeat: int) -> tuple[list[float], list[float], str]:
    cpus, walls, out = [], [], ""
    for _ in range(repeat):
        cpu, wall, out = measure(argv, cwd)
        cpus.append(cpu)
        walls.append(wall)
    return cpus, walls, out


def line(label: str, cpus: list[float], walls: list[float], target: str = "",
         ok: bool | None = None) -> str:
    verdict = "" if ok is None else ("  PASS" if ok else "  FAIL")
    return (f"{label:<34} CPU min {min(cpus):6.3f} s  median {statistics.median(cpus):6.3f} s"
            f"   wall min {min(walls):6.3f} s  median {statistics.median(walls):6.3f} s"
            f"{'   target ' + target if target else ''}{verdict}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    args = ap.parse_args()
    py, entry = sys.executable, str(ROOT / "orchestrate.py")
    failed = False
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cfg = write_design(tmp)
        dry = [py, entry, "--config", str(cfg), "--dry-run", "--json", "--runs-dir",
               str(tmp / "runs")]
        measure(dry, tmp)  # warm: byte-code compiled, files in the page cache
        cpus, walls, out = series(dry, tmp, args.repeat)
        data = json.loads(out)
        print(f"design: {data['n_conditions']:,} conditions x {data['n_cases']:,} cases = "
              f"{data['total_runs']:,} runs; {args.repeat} runs of each command, {py}")
        if data["total_runs"] != 10**6:
            sys.exit(f"expected 10^6 runs, got {data['total_runs']}")
        ok = min(cpus) <= DRY_RUN_CPU_S
        failed |= not ok
        print(line("--dry-run --json (10^6 runs)", cpus, walls, f"<= {DRY_RUN_CPU_S} CPU-s", ok))
        cpus, walls, _ = series([py, entry, "--help"], tmp, args.repeat)
        ok = min(walls) <= HELP_WALL_S
        failed |= not ok
        print(line("--help", cpus, walls, f"<= {HELP_WALL_S} s wall", ok))
        cpus, walls, _ = series([py, "-c", "pass"], tmp, args.repeat)
        print(line("(context) interpreter start", cpus, walls))
        cpus, walls, _ = series([py, "-c", "import eval_harness.cli.dry_run"], tmp, args.repeat)
        print(line("(context) dry-run imports only", cpus, walls))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
