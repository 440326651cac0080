"""HTTP, OpenAI and Anthropic runners against a local stub: retries, quota/auth fail-fast."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from runner_helpers import FIXTURES, FakeScorer, options, records, write_eval

sys.path.insert(0, str(FIXTURES))
from http_stub import StubServer

from eval_harness.errors import QuotaExhausted
from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute
from eval_harness.runner.httpcall import classify, parse_retry_after
from eval_harness.trace.reader import read_trace


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def _run(tmp_path: Path, runner: dict, **kw):
    cfg = write_eval(tmp_path, factors={"effort": ["low", "high"]}, runner=runner,
                     execution={"retries": 2}, **kw)
    scorer = FakeScorer()
    summary = execute(prepare(cfg), scorer, options(tmp_path / "runs", concurrency=4))
    return summary, scorer


def test_429_once_is_retried_after_retry_after(tmp_path: Path, stub: StubServer) -> None:
    summary, _ = _run(tmp_path, {"type": "http", "url": stub.url + "/429once"}, n_cases=2)
    recs = records(summary.eval_dir)
    assert len(recs) == 4 and all(r["status"] == "ok" and r["composite"] == 1.0 for r in recs)
    assert all(r["attempts"] == 2 and r["cost_usd"] == 0.002 and r["tokens"] == 27 for r in recs)
    times: dict[tuple[str, str], list[float]] = {}
    for _path, case, t, _, body in stub.log:
        times.setdefault((case, body["condition_id"]), []).append(t)
    gaps = [ts[1] - ts[0] for ts in times.values()]
    assert len(gaps) == 4 and min(gaps) >= 0.95  # Retry-After: 1 honoured


def test_500s_end_errored_after_retries(tmp_path: Path, stub: StubServer) -> None:
    summary, scorer = _run(tmp_path, {"type": "http", "url": stub.url + "/500"}, n_cases=1)
    recs = records(summary.eval_dir)
    assert len(recs) == 2 and all(r["status"] == "errored" for r in recs)
    assert all(r["reason"].startswith("HTTP 500") and r["attempts"] == 3 for r in recs)
    assert scorer.calls == [] and all(r["scores"] == {} for r in recs)


@pytest.mark.parametrize("path", ["/quota", "/auth"])
def test_quota_and_auth_abort_with_exit_3_and_no_records(tmp_path: Path, stub: StubServer,
                                                         path: str) -> None:
    cfg = write_eval(tmp_path, factors={"effort": ["low", "high"]}, n_cases=20,
                     runner={"type": "http", "url": stub.url + path}, execution={"retries": 2})
    scorer = FakeScorer()
    with pytest.raises(QuotaExhausted) as err:
        execute(prepare(cfg), scorer, options(tmp_path / "runs", concurrency=2))
    assert err.value.exit_code == 3
    assert records(tmp_path / "runs" / "t") == [] and scorer.calls == []
    assert len(stub.log) < 10  # stopped launching: far fewer than 40 cells were tried
    statuses = {json.loads(p.read_text())["status"] for p in (tmp_path / "runs").glob("t/*/run.json")}
    assert statuses == {"aborted"}


def test_quota_exit_3_through_the_cli(tmp_path: Path, stub: StubServer, cli) -> None:
    cfg = write_eval(tmp_path, factors={"effort": ["low"]}, n_cases=3,
                     runner={"type": "http", "url": stub.url + "/quota"})
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / "runs"),
                       "--no-judge-check", "--no-analysis")
    assert code == 3 and "quota" in err


def test_openai_and_anthropic_round_trip(tmp_path: Path, stub: StubServer, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test-123456")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url + "/anthropic")
    for kind, model, cost, tools in (("openai", "gpt-x", 1000 * 1.0 / 1e6 + 500 * 2.0 / 1e6, 1),
                                     ("anthropic", "claude-x", 2000 * 1.0 / 1e6 + 100 * 2.0 / 1e6, 1)):
        sub = tmp_path / kind
        sub.mkdir()
        cfg = write_eval(sub, factors={"model": [model]}, n_cases=1,
                         runner={"type": kind, "pricing": {model: [1.0, 2.0]}},
                         execution={"prompt": "case: {{ input.question }} please"})
        (sub / "cases.yaml").write_text("- {id: c00, input: {question: c00}, "
                                        "expected: {answer: answer-c00}}\n")
        summary = execute(prepare(cfg), FakeScorer(), options(sub / "runs"))
        [rec] = records(summary.eval_dir)
        assert rec["status"] == "ok" and rec["composite"] == 1.0, rec
        assert rec["cost_usd"] == pytest.approx(cost) and rec["tool_calls"] == tools
        [step] = read_trace(next(summary.eval_dir.glob("*/cases/c00"))).steps  # type: ignore[union-attr]
        # openai's JSON-text arguments are parsed, so their secret-looking keys are masked
        assert (step.kind, step.name, step.input) == (
            ("tool", "search", {"q": "c00", "api_key": "***"}) if kind == "openai"
            else ("tool", "calc", {"x": 1}))
    headers = {p: h for p, _, _, h, _ in stub.log}
    assert headers["/openai/chat/completions"]["authorization"] == "Bearer sk-test-123456"
    assert headers["/anthropic/v1/messages"]["x-api-key"] == "ak-test-123456"
    assert headers["/anthropic/v1/messages"]["anthropic-version"] == "2023-06-01"
    bodies = {p: b for p, _, _, _, b in stub.log}
    assert bodies["/openai/chat/completions"]["messages"][-1]["content"] == "case: c00 please"


def test_classification_table() -> None:
    assert classify(429, '{"error": {"code": "insufficient_quota"}}')[0] == "quota"
    assert classify(400, "Your credit balance is too low")[0] == "quota"
    assert classify(429, "slow down")[0] == "transient"
    assert classify(503, "")[0] == "transient" and classify(529, "")[0] == "transient"
    assert classify(401, "")[0] == "auth" and classify(403, "forbidden")[0] == "auth"
    assert classify(404, "")[0] == "error" and classify(400, "bad")[0] == "error"
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None
