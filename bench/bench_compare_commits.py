"""Benchmark: ``--analyze-only`` of two checkouts side by side, in one run, on the same data.

"No slower than before" (issue 32) is judged here: one synthetic run set (bench/scale_data.py,
default 16 conditions × 5,000 cases × 3 replications, 2 judges, agent-eval-harness layout,
as docs/performance.md's target) is analysed by the BEFORE and the AFTER checkout, each as
a child process ``python <checkout>/orchestrate.py --analyze-only RUNS --config eval.yaml
--output OUT --per-judge`` with ``PYTHONPATH=<checkout>`` (the script's folder is first on
``sys.path`` anyway; a probe checks that each side imports its own ``eval_harness``).
The two sides alternate (round 1: before, after; round 2: after, before; …) so a change in
the machine's load hits both, after one unmeasured warm-up run each.

Measured per run: CPU seconds = user + system of that child (``os.wait4``'s rusage: the
child and the processes it waited for), wall seconds and peak RSS (its ``ru_maxrss``).
Reported: each run, then per side the best (minimum) and median CPU, and the ratio of the
best CPU after / before. CPU seconds, not wall, are the figure to compare on a shared
machine; the best of N is the least disturbed run. Exit status 1 when the after side's best
CPU exceeds the before side's by more than ``--tolerance`` (default 5 %), or when the two
sides' documents differ (anova.json, comparisons.json, leaderboard.json, report.json:
compared after parsing, anova.json's ``generated_at`` and report.json's ``generated_at``
aside); 2 on a usage error or a failed child.

``--before`` / ``--after`` take a checkout directory or a commit of this repository (then
``git archive <commit>`` is unpacked into a temporary directory: no worktree is created).

Usage::

    python bench/bench_compare_commits.py --before dde14c5 --after .             # 16x5000x3, best of 5
    python bench/bench_compare_commits.py --before /work/wt/old --after . --size 16x200x3 --repeat 2
    python bench/bench_compare_commits.py --before dde14c5 --after . --keep /tmp/cmp   # reuse the run set

Not part of the test suite (it takes minutes at the default size); tests/bench only runs
its helpers at a tiny size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale_data

REPO = Path(__file__).resolve().parent.parent
#: documents whose equality is checked between the two sides, and the keys ignored
DOCUMENTS = ("anova.json", "comparisons.json", "leaderboard.json", "report.json")
IGNORED_KEYS = {"anova.json": frozenset({"generated_at"}),
                "report.json": frozenset({"generated_at"})}


class Failed(Exception):
    """A usage error or a failed child: exit status 2."""


@dataclass(frozen=True)
class Side:
    """One checkout under test."""

    name: str  # "before" / "after"
    root: Path
    label: str  # what it is: commit and path


@dataclass(frozen=True)
class Usage:
    cpu_s: float
    wall_s: float
    peak_mib: float
    code: int


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()


def resolve_side(name: str, spec: str, scratch: Path) -> Side:
    """A checkout directory as given, or a commit of this repository unpacked (git archive)
    under ``scratch``."""
    path = Path(spec)
    if path.is_dir():
        root = path.resolve()
        if not (root / "orchestrate.py").is_file():
            raise Failed(f"--{name} {spec}: no orchestrate.py there (not a checkout)")
        try:
            commit = _git("rev-parse", "--short", "HEAD", cwd=root)
            dirty = " (uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no",
                                                     cwd=root) else ""
        except (subprocess.CalledProcessError, OSError):
            commit, dirty = "unknown commit", ""
        return Side(name, root, f"{commit}{dirty} at {root}")
    try:
        commit = _git("rev-parse", "--verify", "--short", f"{spec}^{{commit}}")
    except (subprocess.CalledProcessError, OSError):
        raise Failed(f"--{name} {spec}: neither a directory nor a commit of {REPO}") from None
    root = scratch / f"{name}-{commit}"
    root.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return Side(name, root, f"{commit} (git archive into {root})")


def child_env(side: Side) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(side.root)}


def probe(side: Side) -> str:
    """The file of the ``eval_harness`` package the side's children import."""
    code = "import eval_harness, sys; sys.stdout.write(eval_harness.__file__)"
    done = subprocess.run([sys.executable, "-c", code], env=child_env(side), cwd=side.root,
                          capture_output=True, text=True, check=True)
    found = Path(done.stdout).resolve()
    if side.root not in found.parents:
        raise Failed(f"{side.name}: imports eval_harness from {found}, not from {side.root}")
    return str(found)


def run_child(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> Usage:
    """Run one child; its own rusage from os.wait4 (no other child is counted)."""
    t0 = time.perf_counter()
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait
    # ru_maxrss: KiB on Linux, bytes on macOS
    peak = ru.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return Usage(ru.ru_utime + ru.ru_stime, wall, peak, proc.returncode)


def analyse(side: Side, runs: Path, config: Path, out: Path, per_judge: bool,
            logs: Path) -> Usage:
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, str(side.root / "orchestrate.py"), "--analyze-only", str(runs),
            "--config", str(config), "--output", str(out)] + (["--per-judge"] if per_judge else [])
    log = logs / f"{out.name}.stderr"
    use = run_child(argv, child_env(side), side.root, log)
    if use.code not in (0, 1):  # 1: a threshold or gate failed, still a full analysis
        tail = log.read_text(errors="replace").strip()[-600:]
        raise Failed(f"{side.name}: exit {use.code}\n{tail}")
    return use


def _diff(a: Any, b: Any, where: str, out: list[str], ignored: frozenset[str] = frozenset()) -> None:
    """Append differences to ``out`` (up to 5); ``ignored``: keys skipped at this level."""
    if len(out) >= 5:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if key in ignored:
                continue
            if key not in a or key not in b:
                out.append(f"{where}.{key}: only on one side")
            else:
                _diff(a[key], b[key], f"{where}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{where}[{i}]", out)
    elif type(a) is not type(b) or (a != b and not (a != a and b != b)):  # NaN == NaN
        out.append(f"{where}: {a!r:.80} vs {b!r:.80}")


def document_differences(before: Path, after: Path) -> list[str]:
    """Up to 5 differences per document between two output folders (exact, after parsing)."""
    out: list[str] = []
    for name in DOCUMENTS:
        a, b = before / name, after / name
        if not a.is_file() or not b.is_file():
            if a.is_file() != b.is_file():
                out.append(f"{name}: written by one side only")
            continue
        found: list[str] = []
        _diff(json.loads(a.read_text()), json.loads(b.read_text()), name, found,
              IGNORED_KEYS.get(name, frozenset()))
        out += found
    return out


def dataset(size: str, layout: str, keep: Path | None, scratch: Path) -> tuple[Path, Path, int]:
    """(runs dir, eval.yaml, samples) of the size, written once (reused under --keep)."""
    conds, cases, reps = (int(x) for x in size.split("x"))
    root = (keep or scratch) / f"{layout}-{size}"
    if not (root / "bench").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        scale_data.write_runs(str(root), layout, conds, cases, reps)
        print(f"wrote {size} ({layout} layout) in {time.perf_counter() - t0:.1f} s", flush=True)
    config = root / "eval.yaml"
    config.write_text(scale_data.config_text(conds, 2, reps, layout=layout))
    return root / "bench", config, conds * cases * reps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--before", required=True, help="checkout directory or commit (the baseline)")
    ap.add_argument("--after", default=str(REPO), help="checkout directory or commit "
                    "(default: this checkout)")
    ap.add_argument("--size", default="16x5000x3",
                    help="conditions x cases x replications (default 16x5000x3)")
    ap.add_argument("--repeat", type=int, default=5, help="measured runs per side (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="unmeasured runs per side first")
    ap.add_argument("--layout", default="aeh", choices=("aeh", "native"))
    ap.add_argument("--no-per-judge", action="store_true", help="analyse without --per-judge")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="allowed excess of the after side's best CPU (default 0.05 = 5 %%)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="write / reuse the run set under this directory")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        ap.error("--repeat must be at least 1, --warmup at least 0")
    scratch = Path(tempfile.mkdtemp(prefix="bench-commits-"))
    try:
        return _compare(args, scratch)
    except Failed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _compare(args: argparse.Namespace, scratch: Path) -> int:
    sides = [resolve_side("before", args.before, scratch), resolve_side("after", args.after, scratch)]
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
          "(CPU seconds are comparable under load; wall seconds are not)", flush=True)
    for side in sides:
        print(f"{side.name:>6}: {side.label}; imports {probe(side)}", flush=True)
    runs, config, samples = dataset(args.size, args.layout, args.keep, scratch)
    logs = scratch / "logs"
    logs.mkdir()
    per_judge = not args.no_per_judge
    print(f"--analyze-only {args.size} ({samples:,} samples, {args.layout} layout"
          f"{', --per-judge' if per_judge else ''}): {args.warmup} warm-up + {args.repeat} "
          "measured runs per side, alternating", flush=True)
    for _ in range(args.warmup):
        for side in sides:
            analyse(side, runs, config, scratch / f"out-{side.name}", per_judge, logs)
    cpu: dict[str, list[float]] = {s.name: [] for s in sides}
    for i in range(args.repeat):
        for side in sides if i % 2 == 0 else sides[::-1]:
            use = analyse(side, runs, config, scratch / f"out-{side.name}", per_judge, logs)
            cpu[side.name].append(use.cpu_s)
            print(f"  round {i + 1}  {side.name:<6}  cpu {use.cpu_s:7.2f} s  wall "
                  f"{use.wall_s:7.2f} s  peak {use.peak_mib:6.0f} MiB  exit {use.code}",
                  flush=True)
    best = {name: min(values) for name, values in cpu.items()}
    for name, values in cpu.items():
        print(f"{name:>6}: best {best[name]:.2f} CPU-s, median {statistics.median(values):.2f} "
              f"CPU-s over {len(values)} runs", flush=True)
    ratio = best["after"] / best["before"] if best["before"] > 0 else float("inf")
    slower = ratio > 1 + args.tolerance
    print(f" ratio: after / before best CPU = {ratio:.3f} "
          f"({'SLOWER' if slower else 'no slower'} than before, tolerance "
          f"{args.tolerance:.0%})", flush=True)
    diffs = document_differences(scratch / "out-before", scratch / "out-after")
    print(" outputs: " + ("identical (" + ", ".join(DOCUMENTS) + "; generated_at aside)"
                          if not diffs else "DIFFER: " + "; ".join(diffs)), flush=True)
    return 1 if slower or diffs else 0


if __name__ == "__main__":
    sys.exit(main())
