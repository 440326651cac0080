#!/usr/bin/env python3
"""Model-call cache overhead and dry-run estimate accuracy (docs/cost.md).

1. **Lookup overhead per cell at 100k entries** (target < 1 ms): a cache file holding
   ``--entries`` replies of ~2 KB; per cell, the cached openai runner builds the request,
   hashes it and reads the entry (a hit restores the result, a miss only looks). Baseline
   in the same run: building the request alone (what every cell does anyway).
2. **Dry-run estimate vs actual cost of the example** (configs/example.yaml, its agent's own
   prices given in ``pricing:``): a pilot run of ``--pilot`` cases, the dry-run estimate of
   the full matrix from the measured tokens, then the full run: estimate / actual.
3. The same cases through the **openai runner** against a local stub billing
   characters / 4 input tokens and a random 40–400-token reply: the estimate from prompt
   length alone (nothing run yet), then after the pilot, against the actual cost.

    python bench/bench_cache.py [--entries 100000] [--lookups 2000] [--pilot 8]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from eval_harness.cache.store import CallCache
from eval_harness.cli.main import main as cli_main
from eval_harness.matrix.experiment import prepare
from eval_harness.runner.cached import CachedRunner
from eval_harness.runner.contract import RunRequest
from eval_harness.runner.llm import OpenAIRunner

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_PRICES = {"example-small": {"input": 0.25, "output": 1.25},  # configs/example/agent.py
                  "example-large": {"input": 3.0, "output": 15.0}}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def lookup_overhead(root: Path, entries: int, lookups: int) -> None:
    cfg_path = root / "api" / "eval.yaml"
    exp = prepare(cfg_path)
    runner = OpenAIRunner(exp.effective[exp.conditions[0].condition_id])
    cache = CallCache(root / "cache")
    wrapped = CachedRunner(runner, cache)
    cond = exp.conditions[0]
    requests = [RunRequest(case_id=f"x{i:06d}", input={"question": f"question number {i}?", "context": "none"},
                           condition_id=cond.condition_id, levels=cond.levels, replication=1,
                           model="gpt-4.1-mini", effort=None, subagent_model=None,
                           config=runner.config, config_dir=cfg_path.parent,
                           case_dir=root / "unused") for i in range(lookups)]
    reply = {"output": "x" * 1800, "exit_code": None, "stdout": "", "stderr": "",
             "cost_usd": 0.001, "cost_source": "table", "input_tokens": 100,
             "output_tokens": 400, "tokens": 500, "steps": None, "files": {},
             "modified_files": {}, "raw": None, "notes": []}
    text = json.dumps(reply)
    keys = [wrapped.key(r)[0] for r in requests]
    rows = [(k, "runner", "openai", "gpt-4.1-mini", time.time(), 0.001, 1.0, text) for k in keys]
    rows += [(f"filler-{i}", "runner", "openai", "gpt-4.1-mini", time.time(), 0.001, 1.0, text)
             for i in range(max(0, entries - lookups))]
    t0 = time.perf_counter()
    conn = cache._conn()
    conn.execute("BEGIN")
    conn.executemany("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    print(f"filled {cache.stats()['entries']:,} entries "
          f"({cache.stats()['bytes'] / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    for r in requests:
        runner.build(r)
    base = (time.perf_counter() - t0) / lookups
    t0 = time.perf_counter()
    for r in requests:
        assert wrapped.run(r).cache_hit
    hit = (time.perf_counter() - t0) / lookups
    t0 = time.perf_counter()
    for r in requests:
        cache.get(wrapped.key(r)[0] + "-miss")
    miss = (time.perf_counter() - t0) / lookups
    print(f"per cell: build request {base * 1e3:.3f} ms (baseline); cached run (build + key + "
          f"hit + restore) {hit * 1e3:.3f} ms; miss lookup {miss * 1e3:.3f} ms; "
          f"overhead of a hit over the baseline {(hit - base) * 1e3:.3f} ms "
          f"({'meets' if hit - base < 1e-3 else 'MISSES'} the < 1 ms target)")
    cache.close()


def _total_cost(eval_dir: Path) -> float:
    total = 0.0
    for p in eval_dir.glob("*/cases/*/record.json"):
        rec = json.loads(p.read_text())
        total += rec.get("cost_usd") or 0.0
        for s in (rec.get("scores") or {}).values():
            total += s.get("cost_usd") or 0.0
    return total


def _estimate(cfg: Path, runs: Path) -> dict[str, Any]:
    code, out, err = cli("--config", str(cfg), "--runs-dir", str(runs), "--dry-run", "--json")
    assert code == 0, err
    est: dict[str, Any] = json.loads(out)["estimate"]
    return est


def _run(cfg: Path, runs: Path, *extra: str) -> None:
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(runs), "--no-analysis",
                       "--no-judge-check", "--no-cache", "--concurrency", "8", *extra)
    assert code == 0, err


def pilot_then_full(cfg: Path, runs: Path, name: str, pilot: int
                    ) -> tuple[dict[str, Any], dict[str, Any], float]:
    """(estimate before any run, estimate after a pilot of ``pilot`` cases, actual cost of
    the full matrix)."""
    cold = _estimate(cfg, runs)
    _run(cfg, runs, "--limit", str(pilot))
    warm = _estimate(cfg, runs)
    _run(cfg, runs)
    return cold, warm, _total_cost(runs / name)


def example_accuracy(root: Path, pilot: int) -> None:
    shutil.copytree(REPO / "configs", root / "configs")
    cfg = root / "configs" / "example.yaml"
    data = yaml.safe_load(cfg.read_text())
    data["pricing"] = EXAMPLE_PRICES
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    before, est, actual = pilot_then_full(cfg, root / "runs-example", "example", pilot)
    print(f"example (cli agent, {before['cost_kind']} before any run): pilot of {pilot} cases "
          f"-> estimate ${est['cost_usd']:.4f} (upper ${est['upper_bound_usd']:.4f}), actual "
          f"${actual:.4f}: estimate/actual = {est['cost_usd'] / actual:.3f}")


class _Stub(BaseHTTPRequestHandler):
    rng = random.Random(7)
    lock = threading.Lock()

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        chars = sum(len(m["content"]) for m in body["messages"])
        with self.lock:
            out = self.rng.randint(40, 400)
        data = json.dumps({"choices": [{"message": {"content": "Answer: x"}}],
                           "usage": {"prompt_tokens": chars // 4 + 7,
                                     "completion_tokens": out}}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def write_api_eval(root: Path, port: int) -> Path:
    (root / "api").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "configs" / "example" / "cases.jsonl", root / "api" / "cases.jsonl")
    cfg = {"name": "api", "matrix": {"factors": {"model": ["gpt-4.1-mini", "gpt-4.1"],
                                                 "context": ["none", "docs"]},
                                     "replications": 2},
           "runner": {"type": "openai", "base_url": f"http://127.0.0.1:{port}/v1",
                      "max_tokens": 400, "system": "Answer briefly; first line: Answer: X."},
           "execution": {"prompt": "Question: {{ input.question }} Context: {{ input.context }}"},
           "dataset": {"path": "cases.jsonl"}}
    path = root / "api" / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def api_accuracy(root: Path, cfg: Path, pilot: int) -> None:
    cold, warm, actual = pilot_then_full(cfg, root / "runs-api", "api", pilot)
    print(f"openai runner on the example's cases: prompt-length estimate ${cold['cost_usd']:.4f}"
          f" (upper ${cold['upper_bound_usd']:.4f}) -> {cold['cost_usd'] / actual:.3f}x actual; "
          f"after a {pilot}-case pilot ${warm['cost_usd']:.4f} -> "
          f"{warm['cost_usd'] / actual:.3f}x; actual ${actual:.4f}; upper bound holds: "
          f"{cold['upper_bound_usd'] >= actual}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--lookups", type=int, default=2000)
    ap.add_argument("--pilot", type=int, default=8)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = write_api_eval(root, server.server_address[1])
        lookup_overhead(root, args.entries, args.lookups)
        example_accuracy(root, args.pilot)
        api_accuracy(root, cfg, args.pilot)
    server.shutdown()


if __name__ == "__main__":
    main()
