"""Issue 34, attack 2: ``--max-spend`` is a cap whatever the cost profile. The first cells
cost $0.01 and later ones $1.00, at concurrency 8: a runner with a known worst case (the
openai runner's ``max_tokens`` × price) never passes the cap; one without (a cli agent
stating its own cost) runs one cell at a time and stops within one cell's cost."""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from json_http import JsonServer

CHEAP_CALLS = 5  # then every call is expensive


def _cases(tmp: Path, n: int = 40) -> None:
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i:02d}", "input": {"question": f"q{i}"}} for i in range(n)]))


def _spent(runs: Path) -> tuple[float, int]:
    recs = [json.loads(p.read_text()) for p in runs.glob("*/*/cases/*/record.json")]
    return sum(r.get("cost_usd") or 0.0 for r in recs), len(recs)


class _Pricey:
    """An honest OpenAI stub (never more completion tokens than max_tokens): the first
    calls answer 10 tokens, later ones max_tokens; it notes the most calls in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.inflight = self.most = 0

    def __call__(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any, None]:
        with self.lock:
            self.calls += 1
            n = self.calls
            self.inflight += 1
            self.most = max(self.most, self.inflight)
        time.sleep(0.05)
        with self.lock:
            self.inflight -= 1
        out = 10 if n <= CHEAP_CALLS else int(body["max_tokens"])
        return 200, {"choices": [{"message": {"role": "assistant", "content": f"a{n}"}}],
                     "usage": {"prompt_tokens": 5, "completion_tokens": out}}, None


def test_cap_holds_when_later_cells_cost_100x_the_first(tmp_path, cli):
    _cases(tmp_path)
    stub = _Pricey()
    with JsonServer(stub) as server:
        cfg = {"name": "spend", "matrix": {"factors": {"model": ["stub-model"]}},
               "runner": {"type": "openai", "base_url": server.openai_base, "max_tokens": 1000},
               # $0.001 per output token: 10 tokens $0.01, 1000 tokens (max_tokens) $1.00
               "pricing": {"stub-model": {"input": 0.0, "output": 1000.0}},
               "dataset": {"path": "cases.yaml"}, "execution": {"timeout": 20, "retries": 0},
               "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
        (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
        code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir",
                           str(tmp_path / "runs"), "--no-analysis", "--no-cache",
                           "--concurrency", "8", "--max-spend", "3")
    spent, n = _spent(tmp_path / "runs")
    assert code == 3, err
    assert "spend cap $3.00 reached" in err
    assert spent <= 3.0 + 1e-9, (spent, n, err)  # a cap: never past it
    assert spent >= 2.0 and stub.most > 1  # and not needlessly timid


def test_unknown_worst_case_runs_one_cell_at_a_time_and_stops_within_one_cell(tmp_path, cli):
    _cases(tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text(f"""\
import fcntl, json, os, sys, time
with open({str(tmp_path / 'count')!r}, 'a+') as fh:
    fcntl.flock(fh, fcntl.LOCK_EX)
    fh.seek(0)
    n = len(fh.read()) + 1
    fh.write('x')
marker = os.path.join({str(tmp_path)!r}, 'inflight')
open(marker + str(os.getpid()), 'w').close()
seen = len([p for p in os.listdir({str(tmp_path)!r}) if p.startswith('inflight')])
time.sleep(0.05)
os.remove(marker + str(os.getpid()))
print(json.dumps({{"output": "a", "cost_usd": 0.01 if n <= {CHEAP_CALLS} else 1.0,
                   "seen": seen}}))
""")
    cfg = {"name": "spend", "matrix": {"factors": {"model": ["m"]}},
           "runner": {"type": "cli", "command": f"{sys.executable} -S {agent}",
                      "output_format": "json"},
           "dataset": {"path": "cases.yaml"}, "execution": {"timeout": 20, "retries": 0},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
    code, _, err = cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir",
                       str(tmp_path / "runs"), "--no-analysis", "--no-cache",
                       "--concurrency", "8", "--max-spend", "3")
    spent, n = _spent(tmp_path / "runs")
    assert code == 3, err
    assert spent <= 3.0 + 1.0 + 1e-9, (spent, n, err)  # within one cell's cost
