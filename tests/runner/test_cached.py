"""The model-call cache end to end: CLI runs against the billing stub over real HTTP."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from cost_helpers import records, stable, write_cost_eval

JUDGES = [
    {"name": "match", "check": "return outputs['output'].startswith(expected['answer']), 'prefix'"},
    {"name": "quality", "prompt": "Rate the answer {{ outputs.output }}.", "score_range": [1, 5],
     "model": "openai:gpt-4.1-nano"},
    {"name": "tone", "prompt": "Is the answer {{ outputs.output }} polite?",
     "model": "anthropic:claude-haiku-4-5"},
]


def _run(cli, cfg: Path, runs: Path, *extra: str) -> tuple[int, str]:
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(runs), "--no-analysis",
                       "--concurrency", "4", *extra)
    return code, err


def test_second_run_makes_no_model_call_and_reproduces_every_record(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing, replications=2, judges=JUDGES)
    code, err = _run(cli, cfg, tmp_path / "a")
    assert code == 0, err
    first = records(tmp_path / "a" / "cost")
    assert len(first) == 2 * 3 * 2 and all(r["status"] == "ok" for r in first.values())
    # runner and both LLM judges were called once per cell (replications: separate samples)
    assert len(billing.calls("runner")) == 12 and len(billing.calls("judge")) == 24
    assert {r["cost_source"] for r in first.values()} == {"config"}
    assert {r["scores"]["quality"]["cost_source"] for r in first.values()} == {"table:2025-11-01"}
    before = len(billing.log)

    code, err = _run(cli, cfg, tmp_path / "b")  # a fresh runs dir: no resume, cache only
    assert code == 0, err
    new = billing.log[before:]
    assert [e["kind"] for e in new] == ["check", "check"]  # only the judges' pre-flight
    # 12 runner calls at $0.01, 12 gpt-4.1-nano and 12 claude-haiku-4-5 verdicts (table)
    assert "36 of 36 calls from cache, $0.17 saved" in err and "$0.00 spent" in err
    second = records(tmp_path / "b" / "cost")
    assert {k: stable(r) for k, r in second.items()} == {k: stable(r) for k, r in first.items()}
    for rec in second.values():
        assert rec["cache_hit"] is True and rec["latency_s"] is None
        assert rec["cached_latency_s"] == first[(rec["condition_id"], rec["case_id"],
                                                 rec["replication"])]["latency_s"]
        assert rec["scores"]["quality"]["cache_hit"] is True


def test_changing_one_judge_prompt_recalls_only_that_judge(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing, judges=JUDGES)
    assert _run(cli, cfg, tmp_path / "a", "--no-judge-check")[0] == 0
    before = len(billing.log)
    changed = [dict(j) for j in JUDGES]
    changed[2]["prompt"] = "Is the answer {{ outputs.output }} polite and kind?"
    write_cost_eval(tmp_path, billing, judges=changed)
    code, err = _run(cli, cfg, tmp_path / "b", "--no-judge-check")
    assert code == 0, err
    new = billing.log[before:]
    assert len(new) == 6 and all(e["kind"] == "judge" and e["path"].endswith("/messages")
                                 and "polite and kind" in json.dumps(e["body"]) for e in new)


def test_no_cache_and_refresh(tmp_path, billing, cli):
    cfg = write_cost_eval(tmp_path, billing)
    assert _run(cli, cfg, tmp_path / "a")[0] == 0
    assert _run(cli, cfg, tmp_path / "b", "--no-cache")[0] == 0
    assert len(billing.calls("runner")) == 12
    code, err = _run(cli, cfg, tmp_path / "c", "--cache-refresh")
    assert code == 0 and len(billing.calls("runner")) == 18 and "0 of 6 calls" in err
    assert not any("cache_hit" in r for r in records(tmp_path / "c" / "cost").values())


def test_secrets_never_enter_keys_or_values(tmp_path, billing, cli, _private_call_cache):
    cfg = write_cost_eval(tmp_path, billing)
    assert _run(cli, cfg, tmp_path / "a")[0] == 0
    text = cfg.read_text().replace("sk-stub-secret-123456", "sk-rotated-key-654321")
    cfg.write_text(text)
    code, err = _run(cli, cfg, tmp_path / "b")
    # another key may be another account or back end: another call (issue 34)
    assert code == 0 and "0 of 6 calls from cache" in err
    db = _private_call_cache / "calls.sqlite3"
    dump = "\n".join(sqlite3.connect(db).iterdump())
    assert "sk-stub-secret" not in dump and "sk-rotated" not in dump and "Bearer" not in dump


def test_two_orchestrators_share_the_cache_without_corrupting_it(tmp_path, billing,
                                                                 _private_call_cache):
    cfg = write_cost_eval(tmp_path, billing, n_cases=12, judges=JUDGES[:2])
    env = {**os.environ}
    argv = [sys.executable, "-m", "eval_harness.cli.main", "--config", str(cfg),
            "--no-analysis", "--no-judge-check", "--concurrency", "4"]
    procs = [subprocess.Popen([*argv, "--runs-dir", str(tmp_path / f"r{i}")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    db = sqlite3.connect(_private_call_cache / "calls.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # 24 cells: one runner entry each, whichever process stored it last; a cell both
    # processes missed at once was answered twice, and both answers' verdicts are stored
    counts = dict(db.execute("SELECT kind, COUNT(*) FROM calls GROUP BY kind").fetchall())
    assert counts["runner"] == 24 and 24 <= counts["judge"] <= 48
    for i in range(2):
        recs = records(tmp_path / f"r{i}" / "cost")
        assert len(recs) == 24 and all(r["status"] == "ok" for r in recs.values())
    before = len(billing.log)
    third = subprocess.run([*argv, "--runs-dir", str(tmp_path / "r3")], env=env,
                           capture_output=True, text=True, timeout=120)
    assert third.returncode == 0 and len(billing.log) == before, third.stderr
