"""The gate on real reruns of the bundled example (configs/example.yaml), fresh seeds.

Run (each run executes the example agent 512 times; minutes in all):

    nice -n 10 .venv/bin/python bench/bench_gate_example.py --reruns 10 --degraded 3

One baseline is exported from a run with seed 1000; then ``--reruns`` unchanged reruns
(seeds 1001, 1002, ...) and ``--degraded`` reruns with ``EXAMPLE_AGENT_DEGRADE=1.0`` are
each analysed against it with ``--fail-on-regression`` under every ``--gate`` rule
(the run once, then ``--analyze-only`` per rule). Printed: exit codes per rule and the
fraction of failed gates with a Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_gate import RULES, wilson  # noqa: E402


def _config(tmp: Path, seed: int, degrade: float) -> Path:
    agent = ROOT / "configs" / "example" / "agent.py"
    path = tmp / f"eval-{seed}.yaml"
    path.write_text(f"""\
extends: {ROOT / "configs" / "example.yaml"}
runner:
  command: python3 -S {agent} --model {{model}} --effort {{effort}} --context {{context}} --case-id {{case_id}} --question {{question}}
dataset:
  path: {ROOT / "configs" / "example" / "cases.jsonl"}
execution:
  env: {{EXAMPLE_AGENT_SEED: "{seed}", EXAMPLE_AGENT_DEGRADE: "{degrade}"}}
""")
    return path


def _cli(*args: str) -> int:
    cmd = [sys.executable, "-m", "eval_harness.cli.main", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reruns", type=int, default=10)
    p.add_argument("--degraded", type=int, default=3)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base = tmp / "baseline.json"
        code = _cli("--config", str(_config(tmp, 1000, 0.0)), "--runs-dir", str(tmp / "r0"),
                    "--output", str(tmp / "a0"), "--no-judge-check", "--export", str(base),
                    "--compact")
        if code != 0:
            print(f"baseline run failed (exit {code})")
            return 1
        plan = [("unchanged", 1001 + i, 0.0) for i in range(args.reruns)]
        plan += [("degraded 1.0", 2001 + i, 1.0) for i in range(args.degraded)]
        results: dict[str, dict[str, list[int]]] = {}
        for kind, seed, degrade in plan:
            runs = tmp / f"r{seed}"
            _cli("--config", str(_config(tmp, seed, degrade)), "--runs-dir", str(runs),
                 "--no-analysis", "--no-judge-check")
            codes = {rule: _cli("--analyze-only", str(runs / "example"), "--config",
                                str(_config(tmp, seed, degrade)), "--output",
                                str(tmp / f"a{seed}-{rule}"), "--baseline", str(base),
                                "--fail-on-regression", "--gate", rule, "--no-report")
                     for rule in RULES}
            print(f"{kind:<13} seed {seed}: " + ", ".join(f"{r} exit {c}"
                                                        for r, c in codes.items()))
            sys.stdout.flush()
            for rule, c in codes.items():
                results.setdefault(kind, {}).setdefault(rule, []).append(c)
        for kind, per_rule in results.items():
            cells = []
            for rule, codes_ in per_rule.items():
                k = sum(c == 1 for c in codes_)
                lo, hi = wilson(k, len(codes_))
                cells.append(f"--gate {rule}: {k}/{len(codes_)} failed [{lo:.2f}, {hi:.2f}]")
            print(f"{kind}: " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
