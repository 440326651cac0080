"""Dry-run of a design with ~1,000,000 runs (1,000 conditions x 1,000 cases x 1 rep).

Prints wall time of the whole `--dry-run --json` (config + dataset + expansion + digests +
validation) in-process, and of a 10x larger grid of conditions' expansion alone.
Run: python bench/bench_dry_run.py
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval_harness.cli.main import main


def _write(tmp: Path, levels: int, cases: int) -> Path:
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


def main_bench() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        path = _write(tmp, 10, 1000)
        out = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(out):
            code = main(["--config", str(path), "--dry-run", "--json", "--runs-dir", str(tmp / "runs")])
        elapsed = time.perf_counter() - t0
        data = json.loads(out.getvalue())
        print(f"exit={code} conditions={data['n_conditions']:,} cases={data['n_cases']:,} "
              f"total_runs={data['total_runs']:,}")
        print(f"dry-run --json wall time: {elapsed:.2f} s")
        out = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(out):
            main(["--config", str(path), "--dry-run", "--runs-dir", str(tmp / "runs")])
        print(f"dry-run (console table) wall time: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main_bench()
