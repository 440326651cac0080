"""Benchmark: our ``--analyze-only`` against agent-eval-harness's analyze path, same data.

For each size (conditions × cases × replications, 2 judges: a boolean gate and a 1–5
score) it writes one run set in agent-eval-harness's layout (``condition.json`` +
``summary.yaml`` + ``run_result.json`` per run, see bench/scale_data.py) and an eval.yaml
in that tool's vocabulary (so both tools compute the same composite), then runs each tool
as a child process on it and prints CPU seconds (user + system of the child, from
``resource.getrusage(RUSAGE_CHILDREN)``), wall seconds and peak RSS, the ratios, and the
largest difference between the two tools' condition means (their ``anova.json``).
CPU time, not wall time, is what to compare: the machine may be shared.

Sizes (the targets of issue 14): 2×2 × 1,000 cases; 16 × 5,000; 16 × 5,000 × 3 reps.

The install measured: ours runs with this interpreter (``sys.executable``), so run the
script from the install you mean to measure. Users get the default install (``pip install
factorial-eval-harness``, no extras), so that is what the headline figures are: the script
REFUSES to run when any package of an optional extra (``fast``: ryaml, ``parquet``:
pyarrow, ...) is importable here, naming them, unless ``--allow-extras`` (then its first
line and a warning name the extras found). Make a default install with::

    python3 -m venv /tmp/venv-default && /tmp/venv-default/bin/pip install -e .
    /tmp/venv-default/bin/python bench/bench_vs_aeh.py ...

Installs nothing. agent-eval-harness (opendatahub-io/agent-eval-harness, package
``agent_eval``) is NOT on PyPI: the PyPI name ``agent-eval-harness`` is an unrelated 0.1.0
project and ``agent-eval`` is allenai's toolkit. To measure it, install it from a checkout
of opendatahub-io/agent-eval-harness into its own venv outside this repository — version
1.41.0 (commit 2a10e504242b42f508ecbfe813080abe1e16a501, measured in docs/performance.md
since issue 40; 1.30.1 is commit 37fb88c285a3fdae981c75a2c1f6c6894c7d2de3)::

    git clone https://github.com/opendatahub-io/agent-eval-harness /opt/aeh
    git -C /opt/aeh checkout 2a10e504242b42f508ecbfe813080abe1e16a501
    python3.11 -m venv /opt/aeh-venv
    /opt/aeh-venv/bin/pip install -e '/opt/aeh[anova]'

(its ``anova`` extra: scipy>=1.17, statsmodels>=0.14.6, pandas>=2.2,<3, pingouin>=0.6.1;
measured with scipy 1.17.1, statsmodels 0.15.0, pandas 2.3.3, pingouin 0.7.0, Python 3.11).
Its analyze path needs only these files of the checkout: pyproject.toml,
``skills/eval-anova/scripts/{orchestrate,analyze}.py``,
``agent_eval/{__init__,_bootstrap,config}.py``, ``agent_eval/harbor/reward.py``,
``agent_eval/anova/{__init__,archive,composite,matrix}.py`` and
``agent_eval/anova/stats/{__init__,anova,pareto}.py``. Then pass its analyze command with
the placeholders ``{config}`` (the eval.yaml), ``{runs}`` (the runs directory) and
``{runs_parent}``::

    python bench/bench_vs_aeh.py --aeh-cmd \\
      '/opt/aeh-venv/bin/python /opt/aeh/skills/eval-anova/scripts/orchestrate.py
       --config {config} --analyze-only --no-report'

Its orchestrator takes no runs path: it analyses ``$AGENT_EVAL_RUNS_DIR/<eval name>``, so
this script runs the command with ``AGENT_EVAL_RUNS_DIR={runs_parent}`` (the run sets are
written to ``<dir>/bench`` and the eval.yaml is named ``bench``). It writes its
``anova.json`` into the runs directory, so ``--keep`` must name a writable directory of
your own. ``--no-report`` skips its eval-compare HTML page (not part of its analysis; at
that commit a separate script that re-reads every summary.yaml): the AEH side is load +
composite + ANOVA/mixed model + Pareto + anova.json, while ours also writes every report,
so the ratio is conservative. Multi-factor designs there are a statsmodels MixedLM fit
(treatment coding), not an F test, so only the condition means and per-case values are
compared (see docs/migrating-from-agent-eval-harness.md).

Both sides in one run of this script (quiet machine, load 0.9; CPU s / wall s / peak
RSS, ours then agent-eval-harness's, ratio of CPU): 4x1000x1 2.7 / 2.5 / 191 MiB vs
5.2 / 5.0 / 206 MiB, 1.9x; 16x5000x1 7.4 / 6.3 / 305 MiB vs 56.9 / 55.8 / 336 MiB, 7.7x;
16x5000x3 12.5 / 9.6 / 354 MiB vs 151.6 / 150.4 / 420 MiB, 12.2x (docs/performance.md).
The two tools' condition means agree to 1e-16 and their per-case values exactly at all
three sizes (and 4x200x3), and F agrees where it computes one (one factor).

Without ``--aeh-cmd`` only our side is measured and the AEH columns say why.

Usage: python bench/bench_vs_aeh.py [--sizes 4x1000x1,16x5000x1,16x5000x3] [--keep DIR]
       [--aeh-cmd CMD] [--sides both|ours|aeh] [--layout aeh|native] [--allow-extras]
"""

from __future__ import annotations

import argparse
import json
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
Usage = tuple[float, float, float, int]


def _child(argv: list[str], env: dict[str, str] | None = None,
           ok: tuple[int, ...] = (0, 1)) -> Usage:
    """(cpu s, wall s, peak RSS MiB, exit code) of one child process; its stderr is shown
    when the exit code is not in ``ok`` (ours exits 1 when a threshold fails)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in ok:
        print(f"  child failed ({done.returncode}): {done.stderr.strip()[-400:]}", flush=True)
    # ru_maxrss of children is the largest child so far (KiB on Linux): run one per process
    return cpu, wall, after.ru_maxrss / 1024, done.returncode


def _isolated(argv: list[str], env: dict[str, str] | None = None,
              ok: tuple[int, ...] = (0, 1)) -> Usage:
    """Run ``argv`` through a fresh interpreter that reports its child's usage, so each
    tool's peak RSS is its own (RUSAGE_CHILDREN keeps the maximum over all children)."""
    here = str(Path(__file__).resolve().parent)
    code = (f"import json,sys; sys.path.insert(0, {here!r}); import bench_vs_aeh as b; "
            f"print(json.dumps(b._child({argv!r}, {env!r}, {ok!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    lines = done.stdout.strip().splitlines()
    for line in lines[:-1]:  # the child's failure, if any
        print(line, flush=True)
    cpu, wall, rss, rc = json.loads(lines[-1])
    return float(cpu), float(wall), float(rss), int(rc)


PACKAGE = "factorial-eval-harness"


def extras_installed() -> dict[str, list[str]]:
    """Extra name -> its packages importable in this environment that the default install
    lacks (empty: this is the default install, as far as our optional extras go)."""
    import importlib.metadata as md
    import re

    try:
        requires = md.distribution(PACKAGE).requires or []
    except md.PackageNotFoundError:  # a checkout on sys.path, not installed: read pyproject
        import tomllib

        project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
        requires = list(project["dependencies"]) + [
            f"{req}; extra == {name!r}"
            for name, reqs in project["optional-dependencies"].items() for req in reqs]
    name_of = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
    core: set[str] = set()
    by_extra: dict[str, set[str]] = {}
    for req in requires:
        got = name_of.match(req)
        if got is None:
            continue
        dist = got.group(1).lower().replace("_", "-")
        extra = re.search(r"extra\s*==\s*[\"']([^\"']+)[\"']", req)
        if extra is None:
            core.add(dist)
        else:
            by_extra.setdefault(extra.group(1), set()).add(dist)
    found: dict[str, list[str]] = {}
    for extra, dists in sorted(by_extra.items()):
        have = []
        for dist in sorted(dists - core - {PACKAGE}):
            try:
                md.distribution(dist)
            except md.PackageNotFoundError:
                continue
            have.append(dist)
        if have:
            found[extra] = have
    return found


def install_name(found: dict[str, list[str]]) -> str:
    """How the printed figures name the install measured."""
    if not found:
        return "default install (no extras)"
    return "WITH EXTRAS (not the default install): " + "; ".join(
        f"{extra}: {', '.join(dists)}" for extra, dists in found.items())


def _ours(runs: Path, config: Path, out: Path) -> list[str]:
    return [sys.executable, str(REPO / "orchestrate.py"), "--analyze-only", str(runs),
            "--config", str(config), "--output", str(out), "--per-judge"]


def _line(size: str, side: str, use: Usage, samples: int) -> None:
    print(f"{size:>12}  {side:<4}  cpu {use[0]:8.1f} s  wall {use[1]:8.1f} s  "
          f"peak {use[2]:7.0f} MiB  {1000 * use[0] / samples:6.3f} ms CPU/sample", flush=True)


def _means(path: Path) -> dict[str, float]:
    """Condition mean by sorted levels, from either tool's anova.json."""
    data = json.loads(path.read_text())
    return {json.dumps(c["levels"], sort_keys=True): float(c["mean"])
            for c in data.get("condition_summaries", [])}


def agreement(ours: Path, theirs: Path) -> str:
    """One line comparing the condition means of the two tools' anova.json."""
    if not (ours.is_file() and theirs.is_file()):
        return ("condition means not compared: "
                f"{'our' if not ours.is_file() else 'its'} anova.json is missing")
    a, b = _means(ours), _means(theirs)
    if not a or a.keys() != b.keys():
        return f"condition means not compared: conditions differ ({len(a)} vs {len(b)})"
    diff = max(abs(a[k] - b[k]) for k in a)
    return f"condition means of {len(a)} conditions: max |ours - aeh| = {diff:.2e}"


def measure(size: str, keep: str | None, aeh_cmd: str | None, layout: str,
            sides: str) -> None:
    parts = size.split("x")
    conds, cases, reps = (int(x) for x in parts[:3])
    missing = float(parts[3]) if len(parts) > 3 else 0.0  # e.g. 16x5000x3x0.02
    root = Path(keep or tempfile.mkdtemp(prefix="bench-aeh-")) / f"{layout}-{size}"
    try:
        if not (root / "bench").is_dir():
            root.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            n = scale_data.write_runs(str(root), layout, conds, cases, reps, missing=missing)
            print(f"{size}: wrote {n:,} samples ({layout} layout) in "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
        config = root / "eval.yaml"
        config.write_text(scale_data.config_text(conds, 2, reps, layout=layout))
        samples = round(conds * cases * reps * (1 - missing))
        ours: Usage | None = None
        if sides in ("both", "ours"):
            # each measurement in its own grandchild so ru_maxrss is that run's peak
            ours = _isolated(_ours(root / "bench", config, root / "out"))
            _line(size, "ours", ours, samples)
            if ours[3] not in (0, 1):
                ours = None
        if sides == "ours":
            return
        if not aeh_cmd:
            print(f"{size:>12}  aeh   {NOT_MEASURED}", flush=True)
            return
        argv = shlex.split(aeh_cmd.format(runs=root / "bench", runs_parent=root,
                                          config=config))
        theirs = _isolated(argv, {"AGENT_EVAL_RUNS_DIR": str(root)}, ok=(0,))
        _line(size, "aeh", theirs, samples)
        if theirs[3] != 0:
            print(f"{size:>12}  aeh   failed (exit {theirs[3]}): no ratio", flush=True)
            return
        print(f"{size:>12}  {agreement(root / 'out' / 'anova.json', root / 'bench' / 'anova.json')}",
              flush=True)
        if ours is not None:
            print(f"{size:>12}  ratio aeh/ours: cpu {theirs[0] / ours[0]:5.2f}x  "
                  f"wall {theirs[1] / ours[1]:5.2f}x  "
                  f"peak memory {theirs[2] / ours[2]:5.2f}x", flush=True)
    finally:
        if keep is None:
            shutil.rmtree(root.parent, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sizes", default="4x1000x1,16x5000x1,16x5000x3",
                    help="conditions x cases x replications[x fraction of cells missing], "
                    "comma-separated (16x5000x3x0.02: 2 %% of cells errored)")
    ap.add_argument("--keep", default=None, help="write / reuse run sets under this directory "
                    "(agent-eval-harness writes its anova.json into them)")
    ap.add_argument("--aeh-cmd", default=os.environ.get("AEH_ANALYZE_CMD"),
                    help="agent-eval-harness analyze command with {config}, {runs} and "
                    "{runs_parent}; run with AGENT_EVAL_RUNS_DIR={runs_parent}")
    ap.add_argument("--sides", default="both", choices=("both", "ours", "aeh"),
                    help="measure both tools (default) or one")
    ap.add_argument("--layout", default="aeh", choices=("aeh", "native"),
                    help="run-directory layout (aeh: both tools read it)")
    ap.add_argument("--allow-extras", action="store_true",
                    help="measure even though packages of optional extras are installed here "
                    "(the figures then are not the default install's; the first line says so)")
    args = ap.parse_args(argv)
    found = extras_installed()
    install = install_name(found)
    if found and not args.allow_extras:
        sys.exit(f"bench_vs_aeh: refusing to measure: this environment is not the default "
                 f"install ({install}). Users get `pip install {PACKAGE}` without extras; "
                 "measure in such a venv (see this script's docstring) or pass "
                 "--allow-extras to measure this one anyway.")
    if found:
        print(f"WARNING: {install}: these figures are NOT what `pip install {PACKAGE}` "
              "gives", file=sys.stderr, flush=True)
    print(f"install: {install}; python {sys.version.split()[0]} ({sys.executable})",
          flush=True)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} "
          "(CPU seconds are comparable under load; wall seconds are not)", flush=True)
    for size in args.sizes.split(","):
        measure(size.strip(), args.keep, args.aeh_cmd, args.layout, args.sides)


if __name__ == "__main__":
    main()
