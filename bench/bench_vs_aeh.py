"""Benchmark: our ``--analyze-only`` against agent-eval-harness's analyze path, same data.

For each size (conditions × cases × replications, 2 judges: a boolean gate and a 1–5
score) it writes one run set in agent-eval-harness's layout (``condition.json`` +
``summary.yaml`` + ``run_result.json`` per run, see bench/scale_data.py), then runs each
tool as a child process on it and prints CPU seconds (user + system of the child, from
``resource.getrusage(RUSAGE_CHILDREN)``), wall seconds and peak RSS, and the ratios.
CPU time, not wall time, is what to compare: the machine may be shared.

Sizes (the targets of issue 14): 2×2 × 1,000 cases; 16 × 5,000; 16 × 5,000 × 3 reps.

Installs nothing. agent-eval-harness (opendatahub-io/agent-eval-harness, package
``agent_eval``, version 1.6 when this was written) is NOT on PyPI: the PyPI name
``agent-eval-harness`` is an unrelated 0.1.0 project and ``agent-eval`` is allenai's
toolkit. To measure it, install it from a checkout into a separate venv outside this
repository, e.g.::

    git clone https://github.com/opendatahub-io/agent-eval-harness /tmp/aeh
    python3.11 -m venv /tmp/aeh-venv && /tmp/aeh-venv/bin/pip install '/tmp/aeh[anova]'

and pass its analyze command with ``{runs}`` (the runs directory) and ``{config}`` (an
eval.yaml with the matrix and judges) placeholders::

    python bench/bench_vs_aeh.py --aeh-cmd \\
      '/tmp/aeh-venv/bin/python /tmp/aeh/skills/eval-anova/scripts/orchestrate.py
       --config {config} --analyze-only {runs}'

Without ``--aeh-cmd`` only our side is measured and the AEH columns say why.

Usage: python bench/bench_vs_aeh.py [--sizes 4x1000x1,16x5000x1,16x5000x3] [--keep DIR]
       [--aeh-cmd CMD] [--layout aeh|native]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_data

REPO = Path(__file__).resolve().parent.parent
NOT_MEASURED = ("agent-eval-harness not measured: it is not installable from PyPI (see this "
                "script's docstring); pass --aeh-cmd to compare")


def _child(argv: list[str]) -> tuple[float, float, float, int]:
    """(cpu s, wall s, peak RSS MiB, exit code) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        print(f"  child failed ({done.returncode}): {done.stderr.strip()[-400:]}", flush=True)
    # ru_maxrss of children is the largest child so far (KiB on Linux): run one per process
    return cpu, wall, after.ru_maxrss / 1024, done.returncode


def _ours(runs: Path, config: Path, out: Path) -> list[str]:
    return [sys.executable, str(REPO / "orchestrate.py"), "--analyze-only", str(runs),
            "--config", str(config), "--output", str(out), "--per-judge"]


def measure(size: str, keep: str | None, aeh_cmd: str | None, layout: str) -> None:
    conds, cases, reps = (int(x) for x in size.split("x"))
    root = Path(keep or tempfile.mkdtemp(prefix="bench-aeh-")) / f"{layout}-{size}"
    try:
        if not (root / "bench").is_dir():
            root.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            n = scale_data.write_runs(str(root), layout, conds, cases, reps)
            print(f"{size}: wrote {n:,} samples ({layout} layout) in "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
        config = root / "eval.yaml"
        config.write_text(scale_data.config_text(conds, 2, reps))
        samples = conds * cases * reps
        # each measurement in its own grandchild so ru_maxrss is that run's peak
        ours = _isolated(_ours(root / "bench", config, root / "out"))
        print(f"{size:>12}  ours  cpu {ours[0]:8.1f} s  wall {ours[1]:8.1f} s  "
              f"peak {ours[2]:7.0f} MiB  {1000 * ours[0] / samples:6.3f} ms CPU/sample",
              flush=True)
        if not aeh_cmd:
            print(f"{size:>12}  aeh   {NOT_MEASURED}", flush=True)
            return
        argv = shlex.split(aeh_cmd.format(runs=root / "bench", config=config))
        theirs = _isolated(argv)
        print(f"{size:>12}  aeh   cpu {theirs[0]:8.1f} s  wall {theirs[1]:8.1f} s  "
              f"peak {theirs[2]:7.0f} MiB", flush=True)
        print(f"{size:>12}  ratio aeh/ours: cpu {theirs[0] / ours[0]:5.2f}x  "
              f"peak memory {theirs[2] / ours[2]:5.2f}x", flush=True)
    finally:
        if keep is None:
            shutil.rmtree(root.parent, ignore_errors=True)


def _isolated(argv: list[str]) -> tuple[float, float, float, int]:
    """Run ``argv`` through a fresh interpreter that reports its child's usage, so each
    tool's peak RSS is its own (RUSAGE_CHILDREN keeps the maximum over all children)."""
    code = (f"import json,sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import bench_vs_aeh as b; "
            f"print(json.dumps(b._child({argv!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    import json

    cpu, wall, rss, rc = json.loads(done.stdout.strip().splitlines()[-1])
    return float(cpu), float(wall), float(rss), int(rc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="4x1000x1,16x5000x1,16x5000x3",
                    help="conditions x cases x replications, comma-separated")
    ap.add_argument("--keep", default=None, help="write / reuse run sets under this directory")
    ap.add_argument("--aeh-cmd", default=os.environ.get("AEH_ANALYZE_CMD"),
                    help="agent-eval-harness analyze command with {runs} and {config}")
    ap.add_argument("--layout", default="aeh", choices=("aeh", "native"),
                    help="run-directory layout (aeh: both tools read it)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
          "(CPU seconds are comparable under load; wall seconds are not)", flush=True)
    for size in args.sizes.split(","):
        measure(size.strip(), args.keep, args.aeh_cmd, args.layout)


if __name__ == "__main__":
    main()
