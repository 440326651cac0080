"""Real subprocess fixture agents: every failure mode lands with the right status and reason."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from runner_helpers import AGENT, FakeScorer, agent_command, by_mode, options, records, write_eval

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute

MODES = ["correct", "wrong", "exit", "hang", "crash", "malformed", "bigout", "slow"]


def test_every_fixture_mode_lands_with_status_and_reason(tmp_path: Path) -> None:
    cfg = write_eval(tmp_path, factors={"mode": MODES}, n_cases=2,
                     runner={"type": "cli", "command": agent_command(), "output_format": "json"},
                     execution={"timeout": 3.0, "kill_grace": 0.3})  # slack for a loaded CI box
    scorer = FakeScorer()
    summary = execute(prepare(cfg), scorer, options(tmp_path / "runs", concurrency=8))
    recs = by_mode(records(summary.eval_dir))
    assert sorted(recs) == sorted(MODES) and all(len(v) == 2 for v in recs.values())
    for mode in ("correct", "bigout", "slow"):
        for r in recs[mode]:
            assert r["status"] == "ok" and r["composite"] == 1.0, (mode, r)
            assert r["cost_usd"] == 0.001 and r["tokens"] == 15 and r["tool_calls"] == 1
    assert all(r["status"] == "ok" and r["composite"] == 0.0 for r in recs["wrong"])
    expected_reason = {
        "exit": "exit code 3: fatal: backend unavailable",
        "hang": "timeout after 3s",
        "crash": "crashed: killed by SIGABRT",
    }
    for mode, reason in expected_reason.items():
        for r in recs[mode]:
            assert r["status"] == "errored" and r["reason"] == reason, r
            assert r["scores"] == {} and r["composite"] is None  # never a zero score
    assert all(r["reason"].startswith("malformed output") for r in recs["malformed"])
    assert all(r["cost_usd"] is None for r in recs["malformed"])  # unknown, not guessed
    # the judge saw only ok runs
    assert sorted({s.levels["mode"] for s in scorer.calls}) == ["bigout", "correct", "slow", "wrong"]
    # the hang was killed within timeout + grace (+ slack), and its log was drained to disk
    for r in recs["hang"]:
        assert 3.0 <= r["latency_s"] < 6.0
    big = next(summary.eval_dir.glob("*mode-bigout*/cases/c00"))
    assert (big / "stdout.log").stat().st_size > 50 * 1024 * 1024
    outputs = json.loads((big / "outputs.json").read_text())
    assert outputs["output"] == "answer-c00"


def test_argv_placeholders_stay_one_element_and_secrets_are_masked(tmp_path: Path,
                                                                   monkeypatch) -> None:
    # not named like a credential, so the echo in outputs.json keeps it (a credential-named
    # variable is masked in every file: tests/security); command.json masks every ${VAR}
    monkeypatch.setenv("FIXTURE_VALUE", "s3cr3t-value")
    cmd = (f"{AGENT.parent / 'echo_argv.py'} --q {{question}} --tok ${{FIXTURE_VALUE}} "
           "--m {model}")
    cfg = write_eval(tmp_path, factors={"model": ["m 1; rm -rf /"]}, n_cases=1,
                     runner={"type": "cli", "command": cmd, "output_format": "json"})
    (tmp_path / "cases.yaml").write_text(
        '- {id: c00, input: {question: "two words \\"quoted\\" $HOME"}, expected: {answer: x}}\n')
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    rec = records(summary.eval_dir)[0]
    assert rec["status"] == "ok", rec
    case = next(summary.eval_dir.glob("*/cases/c00"))
    argv_seen = json.loads(json.loads((case / "outputs.json").read_text())["output"])
    assert argv_seen == ["--q", 'two words "quoted" $HOME', "--tok", "s3cr3t-value",
                         "--m", "m 1; rm -rf /"]
    recorded = json.loads((case / "command.json").read_text())["argv"]
    assert "s3cr3t-value" not in json.dumps(recorded) and "***" in recorded


def test_child_environment_has_cell_context_over_inherited(tmp_path: Path, monkeypatch) -> None:
    # the fast start passes a pre-built b"K=V" list: a stale EVAL_* value inherited from the
    # parent must be replaced by the cell's (never a duplicate that getenv may pick first),
    # inherited EVAL_* keys the cell does not set stay, and other variables pass through
    monkeypatch.setenv("EVAL_CASE_ID", "stale")
    monkeypatch.setenv("EVAL_EFFORT", "inherited")
    monkeypatch.setenv("EH_PASS", "through")
    script = tmp_path / "show_env.py"  # the raw environment block, duplicates included
    script.write_text("import os, sys\nblock = open('/proc/self/environ', 'rb').read()\n"
                      "e = os.environ\nprint(e['EVAL_CASE_ID'], e['EVAL_EFFORT'], e['EH_PASS'],"
                      " e['EVAL_REPLICATION'])\nsys.stdout.write(block.decode().replace('\\0', '\\n'))\n")
    cmd = f"{sys.executable} -S {script}"
    cfg = write_eval(tmp_path, factors={"f": [1]}, n_cases=2,
                     runner={"type": "cli", "command": cmd})
    summary = execute(prepare(cfg), None, options(tmp_path / "runs"))
    assert summary.ok == 2
    for case_id in ("c00", "c01"):
        case = next(summary.eval_dir.glob(f"*/cases/{case_id}"))
        lines = (case / "stdout.log").read_text().splitlines()
        assert lines[0] == f"{case_id} inherited through 1"
        assert sum(line.startswith("EVAL_CASE_ID=") for line in lines[1:]) == 1


def test_verbose_tees_prefixed_lines_and_still_writes_the_logs(tmp_path: Path, capfd) -> None:
    cfg = write_eval(tmp_path, factors={"mode": ["exit", "correct"]}, n_cases=2, replications=2,
                     runner={"type": "cli", "command": agent_command(), "output_format": "json"})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs", verbose=True))
    err = capfd.readouterr().err.splitlines()
    # each line names its cell: levels, replication, case (conditions run side by side)
    for rep in (1, 2):
        for case in ("c00", "c01"):
            assert f"[exit r{rep} {case}] partial output" in err
            assert f"[exit r{rep} {case}] fatal: backend unavailable" in err
            assert any(line.startswith(f"[correct r{rep} {case}] {{\"output\": \"answer-{case}\"")
                       for line in err)
    recs = by_mode(records(summary.eval_dir))
    assert all(r["reason"] == "exit code 3: fatal: backend unavailable" for r in recs["exit"])
    assert all(r["status"] == "ok" and r["composite"] == 1.0 for r in recs["correct"])
    case = next(summary.eval_dir.glob("*mode-exit*r2*/cases/c01"))
    assert (case / "stdout.log").read_text() == "partial output\n"
    assert (case / "stderr.log").read_text() == "fatal: backend unavailable\n"
