"""HTTP findings: credentials re-sent on redirect, no wall-clock deadline, unbounded reply
size, header values with line breaks (runners and LLM judges share the transport)."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler

import pytest

from eval_harness.judges.llm.chat_call import LLMError, RetryPolicy, complete
from eval_harness.judges.llm.providers import ModelRef
from eval_harness.runner.httpcall import post_json

from .hostile_server import OPENAI_OK, HostileServer, reply_json

KEY = "sk-test-SECRET-0123456789"


def _redirector(target: str, status: int):
    def behave(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", target + "/v1/chat/completions")
        h.send_header("Content-Length", "0")
        h.end_headers()
    return behave


@pytest.mark.parametrize("status", [302, 307, 308])
def test_runner_redirect_to_other_origin_is_refused_and_key_never_leaves(status: int) -> None:
    with HostileServer(lambda h: reply_json(h, OPENAI_OK)) as thief, \
            HostileServer(_redirector(thief.url, status)) as api:
        reply = post_json(api.url + "/v1/chat/completions", {"model": "m"},
                          {"Authorization": f"Bearer {KEY}"}, 5.0)
    assert thief.seen == []  # the other origin never saw a request, let alone the key
    assert reply.failure == "error" and reply.body is None
    assert thief.url in (reply.reason or "") and "redirect" in (reply.reason or "")


def test_judge_redirect_is_refused_without_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer(lambda h: reply_json(h, OPENAI_OK)) as thief, \
            HostileServer(_redirector(thief.url, 307)) as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        with pytest.raises(LLMError, match="redirect"):
            complete(ModelRef("openai", "m"), "sys", "user",
                     policy=RetryPolicy(attempts=3, base_delay=0.01, timeout=5))
        assert len(api.seen) == 1  # a refused redirect is not retried
    assert thief.seen == []


def _trickle(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Length", "100000")
    h.end_headers()
    for _ in range(200):  # a byte every 50 ms: each read is "fast", the call never ends
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.05)


def test_trickling_server_hits_the_wall_clock_deadline() -> None:
    with HostileServer(_trickle) as api:
        t0 = time.monotonic()
        reply = post_json(api.url, {}, {}, 0.6)
        took = time.monotonic() - t0
    assert took < 2.0, took
    assert reply.failure == "transient" and "0.6 s" in (reply.reason or "")


def test_trickling_headers_hit_the_deadline_too() -> None:
    def behave(h: BaseHTTPRequestHandler) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for i in range(100):
            h.wfile.write(f"X-{i}: a\r\n".encode())
            h.wfile.flush()
            time.sleep(0.05)

    with HostileServer(behave) as api:
        t0 = time.monotonic()
        reply = post_json(api.url, {}, {}, 0.5)
    assert time.monotonic() - t0 < 2.0 and reply.failure == "transient"


def test_judge_deadline_is_wall_clock_per_request() -> None:
    with HostileServer(_trickle) as api:
        import os
        old = os.environ.get("OPENAI_BASE_URL")
        os.environ["OPENAI_BASE_URL"] = api.url + "/v1"
        try:
            t0 = time.monotonic()
            with pytest.raises(LLMError, match=r"within 0\.4 s"):
                complete(ModelRef("openai", "m"), "s", "u",
                         policy=RetryPolicy(attempts=2, base_delay=0.01, timeout=0.4))
            assert time.monotonic() - t0 < 2.5
        finally:
            if old is None:
                os.environ.pop("OPENAI_BASE_URL", None)
            else:
                os.environ["OPENAI_BASE_URL"] = old


def _flood(h: BaseHTTPRequestHandler) -> None:  # no Content-Length: read until close
    h.send_response(200)
    h.send_header("Connection", "close")
    h.end_headers()
    block = b"x" * 65536
    for _ in range(64):  # 4 MiB offered
        h.wfile.write(block)


def test_reply_larger_than_the_cap_is_an_error_not_a_huge_string() -> None:
    with HostileServer(_flood) as api:
        reply = post_json(api.url, {}, {}, 5.0, max_bytes=256 * 1024)
    assert reply.failure == "error" and "262,144-byte cap" in (reply.reason or "")
    assert reply.text == ""


def test_declared_oversize_reply_is_refused_before_reading() -> None:
    def behave(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(300 * 1024 * 1024))
        h.end_headers()

    with HostileServer(behave) as api:
        reply = post_json(api.url, {}, {}, 5.0, max_bytes=1024 * 1024)
    assert reply.failure == "error" and "exceeds" in (reply.reason or "")


def test_header_with_inner_line_break_is_refused_without_quoting_the_key() -> None:
    with HostileServer(lambda h: reply_json(h, OPENAI_OK)) as api:
        reply = post_json(api.url, {}, {"Authorization": f"Bearer {KEY}\nX-Evil: 1"}, 5.0)
        assert api.seen == []  # nothing sent
    assert reply.failure == "auth" and "Authorization" in (reply.reason or "")
    assert KEY not in (reply.reason or "")


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_key_with_one_trailing_newline_is_sent_without_it(end: str) -> None:
    """Attack (issue 28): a key read from a secret file keeps its newline; it was refused
    as an auth failure (exit 3). One trailing newline is dropped (docs/security.md)."""
    with HostileServer(lambda h: reply_json(h, OPENAI_OK)) as api:
        reply = post_json(api.url, {}, {"Authorization": f"Bearer {KEY}{end}"}, 5.0)
        assert [r["headers"]["Authorization"] for r in api.seen] == [f"Bearer {KEY}"]
    assert reply.failure == "none"


def _truncated(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Length", "1000")
    h.send_header("Connection", "close")
    h.end_headers()
    h.wfile.write(b'{"choices": [{"message": {"content": "hal')
    h.wfile.flush()
    h.close_connection = True


def test_truncated_body_is_a_retried_network_error() -> None:
    """Attack (issue 28): a body cut short of its Content-Length was "malformed output"
    (not retried) instead of a network error (retried)."""
    with HostileServer(_truncated) as api:
        reply = post_json(api.url, {}, {}, 5.0)
    assert reply.failure == "transient" and "truncated reply" in (reply.reason or "")


def test_limits_are_config_keys_in_the_model_and_schema() -> None:
    from eval_harness.config.runner_model import ExecutionBlock
    from eval_harness.config.schema import eval_schema

    props = eval_schema()["$defs"]["ExecutionBlock"]["properties"]
    assert props["max_response_bytes"]["default"] == 32 * 1024 * 1024
    assert props["max_log_bytes"]["default"] == 64 * 1024 * 1024
    assert ExecutionBlock(max_response_bytes=4096).max_response_bytes == 4096
    with pytest.raises(ValueError):
        ExecutionBlock(max_response_bytes=10)
