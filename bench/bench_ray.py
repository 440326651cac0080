#!/usr/bin/env python3
"""Ray executor throughput vs the local thread executor, same trivial agent, equal
parallelism, measured in one run.

A fresh local Ray cluster with ``--parallelism`` CPUs (bench/ray_cluster.py: at most that
many cells run at once) against the local executor at ``--concurrency`` = parallelism.
Both run the same matrix of ``--cells`` cells of a trivial cli agent (``--agent echo``:
``/bin/echo answer-<case>``; ``--agent python``: a one-line ``python -S``), each into a
fresh runs directory, writing the full run-directory layout. The Ray
side keeps ``--in-flight`` cells submitted (``--concurrency``; they travel in batches, and
a task waits at the raylet for each worker, so a worker never waits for the driver), which
is how it is meant to be run. The driver's connect, the
working_dir upload and the workers' start-up (an 8-cell warm-up run) are timed separately:
paid once per job, not per cell. Prints cells/s
of both and the ratio ray/local (target >= 0.7).

    python bench/bench_ray.py [--cells 2000] [--parallelism 2] [--in-flight 32] [--repeat 2]
                              [--agent echo|python]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from ray_cluster import local_cluster, use_loopback

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import EngineOptions, execute

#: the trivial agents: a program that prints its answer, or a stdlib-only Python script
AGENTS = {"echo": "/bin/echo answer-{case_id}",
          "python": f"{sys.executable} -S -c 'import sys; print(sys.argv[1])' {{case_id}}"}


def write_config(root: Path, cells: int, agent: str = "echo") -> Path:
    """4 conditions x cells/4 cases, runner ``AGENTS[agent]``."""
    cases = [{"id": f"c{i:05d}", "input": {"q": i}} for i in range(cells // 4)]
    (root / "cases.yaml").write_text(yaml.safe_dump(cases))
    cfg = {"name": "bench", "matrix": {"factors": {"a": [1, 2], "b": [1, 2]}},
           "runner": {"type": "cli", "command": AGENTS[agent]},
           "dataset": {"path": "cases.yaml"}, "execution": {"retries": 0}}
    path = root / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def run_once(config: Path, runs: Path, **options: object) -> float:
    """Wall seconds of one full run of the matrix into ``runs``."""
    exp = prepare(config)
    start = time.perf_counter()
    summary = execute(exp, None, EngineOptions(runs_dir=runs, progress="off", **options))  # type: ignore[arg-type]
    took = time.perf_counter() - start
    if summary.ok != len(summary.plan.todo):
        raise SystemExit(f"{summary.ok} of {len(summary.plan.todo)} ok: {summary.reasons}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=2000)
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--in-flight", type=int, default=32,
                    help="the Ray side's --concurrency: cells in flight (default 32, 16 per "
                    "CPU: cells travel in batches of about in-flight / (2 x CPUs))")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--agent", choices=sorted(AGENTS), default="echo",
                    help="echo (~2 ms a cell: the per-cell overhead shows most) or python")
    args = ap.parse_args()
    use_loopback()  # before ray is imported (bench/ray_cluster.py)
    work = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    try:
        config = write_config(work, args.cells, args.agent)
        scratch = work / "worker-tmp"  # the workers' TMPDIR: their scratch folders
        scratch.mkdir()
        with local_cluster(num_cpus=args.parallelism, worker_tmp=scratch) as address:
            import ray

            start = time.perf_counter()
            ray.init(address=address, runtime_env={"working_dir": str(work),
                                                   "excludes": ["/runs-*/", "/worker-tmp/"]})
            # the first tasks wait for Ray to start worker processes (once per job)
            warm = write_config(work / "warm" if (work / "warm").mkdir() is None else work, 8)
            run_once(warm, work / "runs-warm", concurrency=args.in_flight, executor="ray",
                     ray_address=address)
            connect = time.perf_counter() - start
            local_s, ray_s = [], []
            for i in range(args.repeat):
                local_s.append(run_once(config, work / f"runs-local-{i}",
                                        concurrency=args.parallelism))
                ray_s.append(run_once(config, work / f"runs-ray-{i}",
                                      concurrency=args.in_flight, executor="ray",
                                      ray_address=address))
            ray.shutdown()
        best_local, best_ray = min(local_s), min(ray_s)
        print(f"agent: {AGENTS[args.agent]}")
        print(f"cells: {args.cells}, parallelism {args.parallelism} (local --concurrency "
              f"{args.parallelism}; Ray {args.parallelism} CPUs, {args.in_flight} in flight)")
        print(f"local thread executor: {args.cells / best_local:8.1f} cells/s "
              f"(best of {args.repeat}: {best_local:.2f} s)")
        print(f"ray executor:          {args.cells / best_ray:8.1f} cells/s "
              f"(best of {args.repeat}: {best_ray:.2f} s; connect, working_dir and "
              f"worker start-up {connect:.2f} s, once per job)")
        left = len(list(scratch.glob("eh-cell-*")))
        print(f"scratch folders the workers left: {left}")
        pairs = " ".join(f"{a / b:.2f}" for a, b in zip(local_s, ray_s, strict=True))
        print(f"ratio of each repeat (local and ray back to back): {pairs}")
        print("load average (1, 5, 15 min) at the end: "
              + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
        ratio = best_local / best_ray
        print(f"ratio ray/local: {ratio:.2f} (target >= 0.7) "
              f"{'OK' if ratio >= 0.7 else 'BELOW TARGET'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
