"""Helpers for the cost-control tests: an eval on the billing stub, record comparison."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from billing_stub import BillingStub

#: record fields that differ between two runs of the same cell by design
VOLATILE = {"finished_at", "latency_s", "cache_hit", "cached_latency_s", "clock_note"}
#: a price per 1M tokens making each stub call (1000 in, 500 out) cost exactly $0.01
CENT_PRICE = {"stub-model": {"input": 5.0, "output": 10.0}}


def write_cost_eval(tmp: Path, stub: BillingStub, *, n_cases: int = 3, replications: int = 1,
                    judges: list[dict[str, Any]] | None = None, provider: str = "openai",
                    execution: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
                    name: str = "cost", factors: dict[str, list[Any]] | None = None) -> Path:
    """An eval whose runner is the stub (model ``stub-model`` priced at one cent a call)."""
    cases = [{"id": f"c{i:02d}", "input": {"question": f"q{i}"},
              "expected": {"answer": f"answer-c{i:02d}"}} for i in range(n_cases)]
    (tmp / "cases.yaml").write_text(yaml.safe_dump(cases))
    base = stub.openai_base if provider == "openai" else stub.anthropic_base
    cfg: dict[str, Any] = {
        "name": name,
        "matrix": {"factors": factors or {"model": ["stub-model"], "tone": ["plain", "terse"]},
                   "replications": replications},
        "runner": {"type": provider, "base_url": base, "api_key": "sk-stub-secret-123456",
                   "max_tokens": 600},
        "dataset": {"path": "cases.yaml"},
        "execution": {"timeout": 20, "retries": 2,
                      "prompt": "case: {{ case_id }} {{ input.tone }}", **(execution or {})},
        "pricing": CENT_PRICE,
        "judges": judges if judges is not None else [
            {"name": "match", "check": "return outputs['output'].startswith(expected['answer']), 'prefix'"}],
        **(extra or {}),
    }
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def records(eval_dir: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """(condition, case, replication) -> record.json."""
    out = {}
    for p in eval_dir.glob("*/cases/*/record.json"):
        rec = json.loads(p.read_text())
        out[(rec["condition_id"], rec["case_id"], rec["replication"])] = rec
    return out


def stable(rec: dict[str, Any]) -> dict[str, Any]:
    """A record without its by-design volatile fields (judge scores keep value/rationale)."""
    out = {k: v for k, v in rec.items() if k not in VOLATILE}
    out["scores"] = {n: {k: v for k, v in s.items() if k not in ("cache_hit", "cached")}
                     for n, s in rec.get("scores", {}).items()}
    return out
