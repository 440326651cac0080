"""Property (issue 28): whatever an HTTP server replies, every runner (http, openai,
anthropic) and the LLM judge turn it into a result — ok, failed or errored with a reason —
never an exception (which the engine records as an internal error).

Replies come from a real local server (hostile_server) speaking HTTP; hypothesis draws the
body: JSON of any shape in the vendors' envelopes (``choices[0].message``, ``content``
blocks, ``usage``), lone surrogates, deep nesting, NaN/Infinity, invalid UTF-8, a
truncated body, and the status code.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval_harness.config.models import EvalConfig
from eval_harness.judges.cache import VerdictCache
from eval_harness.judges.interface import Sample
from eval_harness.judges.llm.chat_call import RetryPolicy
from eval_harness.judges.scorer import JudgeScorer
from eval_harness.runner.cell import Backoff, call_with_retries, finish_cell_data
from eval_harness.runner.contract import RunRequest
from eval_harness.runner.runner_types import build_runner
from tests.security.hostile_server import HostileServer

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                    st.sampled_from(["\ud800", "\udcff x", "\x1b[2J", "\u202e"]))
ANY = st.recursive(SCALARS, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=8), kids, max_size=3)),
    max_leaves=12)


def _envelope(draw_any: Any) -> st.SearchStrategy[Any]:
    """The vendors' reply shapes with any value in any slot."""
    message = st.one_of(draw_any, st.fixed_dictionaries(
        {}, optional={"content": draw_any, "tool_calls": st.one_of(draw_any, st.lists(
            st.one_of(draw_any, st.fixed_dictionaries({}, optional={"function": draw_any})),
            max_size=3)), "refusal": draw_any}))
    openai = st.fixed_dictionaries({}, optional={
        "choices": st.one_of(draw_any, st.lists(st.one_of(draw_any, st.fixed_dictionaries(
            {}, optional={"message": message, "finish_reason": draw_any})), max_size=2)),
        "usage": st.one_of(draw_any, st.dictionaries(st.sampled_from(
            ["prompt_tokens", "completion_tokens", "input_tokens", "output_tokens",
             "total_tokens", "cost"]), draw_any, max_size=4))})
    anthropic = st.fixed_dictionaries({}, optional={
        "content": st.one_of(draw_any, st.lists(st.one_of(draw_any, st.fixed_dictionaries(
            {}, optional={"type": st.sampled_from(["text", "tool_use", "x"]), "text": draw_any,
                          "name": st.sampled_from(["submit_verdict", "t"]),
                          "input": draw_any})), max_size=3)),
        "stop_reason": draw_any, "usage": draw_any})
    agent = st.fixed_dictionaries({}, optional={
        "output": draw_any, "cost_usd": draw_any, "usage": draw_any, "steps": draw_any,
        "tool_calls": draw_any})
    return st.one_of(openai, anthropic, agent, draw_any)


def _body(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


BODIES = st.one_of(
    _envelope(ANY).map(_body),
    st.binary(max_size=64),
    st.integers(1, 3000).map(lambda n: b'{"output": ' + b"[" * n + b"]" * n + b"}"),
    st.integers(1, 3000).map(lambda n: b'{"choices": [{"message": {"content": ' + b"[" * n
                             + b"]" * n + b"}}]}"),
)
REPLIES = st.tuples(BODIES, st.sampled_from([200, 200, 200, 400, 401, 429, 500]),
                    st.booleans())


class _Reply:
    """What the server sends next (hypothesis sets it per example)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.body, self.status, self.truncate = b"{}", 200, False

    def behave(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            body, status, truncate = self.body, self.status, self.truncate
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body) + (7 if truncate else 0)))
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(body)
        h.close_connection = True


@pytest.fixture(scope="module")
def server():
    reply = _Reply()
    with HostileServer(reply.behave) as srv:
        yield srv, reply


def _config(kind: str, url: str) -> EvalConfig:
    runner: dict[str, Any] = {"type": kind}
    if kind == "http":
        runner["url"] = url
    else:
        runner["base_url"] = url + ("/v1" if kind == "openai" else "")
        runner["api_key"] = "sk-test-0123456789"
    return EvalConfig.model_validate({
        "name": "p", "matrix": {"factors": {"model": ["m"]}}, "runner": runner,
        "execution": {"timeout": 5, "retries": 0},
        "models": {"judge": "openai:judge"},
        "judges": [{"name": "graded", "prompt": "Grade {{ outputs.output }}",
                    "score_range": [1, 5]}, {"name": "yes", "prompt": "Is it right?"}]})


def _set(reply: _Reply, body: bytes, status: int, truncate: bool) -> None:
    with reply.lock:
        reply.body, reply.status, reply.truncate = body, status, truncate


@pytest.mark.parametrize("kind", ["http", "openai", "anthropic"])
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(reply=REPLIES)
def test_every_reply_becomes_a_result_for_every_runner(server, tmp_path: Path, kind: str,
                                                       reply: tuple[bytes, int, bool]) -> None:
    srv, state = server
    _set(state, *reply)
    cfg = _config(kind, srv.url)
    case_dir = tmp_path / kind / "c1"
    case_dir.mkdir(parents=True, exist_ok=True)
    request = RunRequest(case_id="c1", input={"question": "q"}, condition_id="abc",
                         levels={"model": "m"}, replication=1, model="m", effort=None,
                         subagent_model=None, config=cfg, config_dir=tmp_path,
                         case_dir=case_dir)
    result, attempts = call_with_retries(build_runner(cfg), request, 0, Backoff(0.01, 0.01),
                                         threading.Event())
    assert result.failure == "none" or result.reason, result
    assert "internal error" not in (result.reason or "")
    record = finish_cell_data(request=request, result=result, attempts=attempts, scorer=None,
                              expected=None, annotations={}, case_hash="h", tags={},
                              digest="d", run_id="r")
    assert record["status"] in ("ok", "errored")
    json.loads((case_dir / "record.json").read_text(encoding="utf-8"))
    json.loads((case_dir / "outputs.json").read_text(encoding="utf-8"))


class _Exp:
    def __init__(self, cfg: EvalConfig, base: Path) -> None:
        self.loaded = type("L", (), {"config": cfg, "base_dir": base})()
        self.effective: dict[str, EvalConfig] = {}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(reply=REPLIES)
def test_every_reply_becomes_a_verdict_or_an_errored_judge(server, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           provider: str,
                                                           reply: tuple[bytes, int, bool]) -> None:
    srv, state = server
    _set(state, *reply)
    monkeypatch.setenv("OPENAI_BASE_URL", srv.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    cfg = _config("http", srv.url).model_copy(
        update={"models": _config("http", srv.url).models.model_copy(
            update={"judge": f"{provider}:judge"})})
    scorer = JudgeScorer(_Exp(cfg, tmp_path), VerdictCache(None),
                         RetryPolicy(attempts=1, base_delay=0.01, timeout=5))
    result = scorer.score(Sample(case_id="c1", input={"q": "x"}, expected="y", annotations={},
                                 outputs={"output": "an answer"}, levels={"model": "m"},
                                 condition_id="abc", replication=1))
    for name, score in result.scores.items():
        if score.errored:
            assert score.error, name
            assert not any(t in score.error for t in (
                "AttributeError", "TypeError", "KeyError", "IndexError", "RecursionError",
                "UnicodeEncodeError", "UnicodeDecodeError")), score.error
        else:
            assert score.value is not None, name
