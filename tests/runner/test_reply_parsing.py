"""Reading an application's reply: usage, cost and steps, with hostile values."""

from __future__ import annotations

import json
import math

import pytest

from eval_harness.runner.cli import fill_from_reply, parse_json_reply
from eval_harness.runner.contract import RunResult, price, usage_tokens


def test_usage_tokens_openai_anthropic_and_hostile_values() -> None:
    assert usage_tokens({"prompt_tokens": 7, "completion_tokens": 3}) == (7, 3, 10)
    assert usage_tokens({"input_tokens": 7, "output_tokens": 3, "total_tokens": 12}) == (7, 3, 12)
    assert usage_tokens("12 tokens") == (None, None, None)  # type: ignore[arg-type]
    for bad in (math.nan, math.inf, -5, True, "7", None):
        assert usage_tokens({"input_tokens": bad, "output_tokens": 3}) == (None, 3, None), bad


@pytest.mark.parametrize("cost", [math.nan, math.inf, -0.5, "0.1", True, None])
def test_an_unusable_cost_stays_unknown(cost: object) -> None:
    result = RunResult()
    fill_from_reply(result, {"output": "a", "cost_usd": cost}, None, "m")
    assert result.cost_usd is None and result.output == "a"


def test_reply_fields_and_pricing() -> None:
    reply = json.loads('{"output": {"x": 1}, "usage": {"input_tokens": 1000000, '
                       '"output_tokens": 500000}, "steps": ["search", {"tool": "calc"}]}')
    result = RunResult()
    fill_from_reply(result, reply, {"m": [2.0, 8.0]}, "m")
    assert result.output == '{"x": 1}'  # a structured answer is kept as JSON text
    assert result.cost_usd == pytest.approx(2.0 + 4.0)  # priced: no cost was stated
    assert [(s["kind"], s["name"]) for s in result.steps or []] == [("tool", "search"),
                                                                   ("tool", "calc")]
    assert result.tool_calls == 2
    assert price({"m": [1.0]}, "m", 1, 1) is None  # a malformed price list prices nothing


def test_parse_json_reply_takes_the_last_object_line() -> None:
    assert parse_json_reply('{"output": "whole"}') == {"output": "whole"}
    text = 'log line\n{"output": "first"}\nmore log\n{"output": "last"}\ntrailing [1]\n'
    assert parse_json_reply(text) == {"output": "last"}
    assert parse_json_reply("no json here\n[1, 2]\n") is None
    # a huge stdout: the tail read from the end of the log is searched instead
    assert parse_json_reply("x" * 100, tail='junk\n{"output": "tail"}\n') == {"output": "tail"}


AGENT_OUTPUTS = {
    "surrogate": r'{"output": "bad \ud800 text", "steps": [{"tool": "\udcff"}]}',
    "nested": '{"output": ' + "[" * 5000 + "]" * 5000 + "}",
    "binary": "\\xff\\xfe\\x00\\x1b[2J binary",
}


@pytest.mark.parametrize("mode", sorted(AGENT_OUTPUTS))
def test_binary_or_invalid_utf8_agent_output_is_a_result(tmp_path, mode: str) -> None:
    """Attack (issue 28): an agent printing lone surrogates, 5,000-deep JSON or raw bytes
    was recorded as an internal error (UnicodeEncodeError, RecursionError)."""
    import sys

    from eval_harness.matrix.experiment import prepare
    from eval_harness.runner.engine import execute
    from tests.runner.runner_helpers import FakeScorer, options, records, write_eval

    script = tmp_path / "agent.py"
    text = AGENT_OUTPUTS[mode]
    if mode == "binary":
        script.write_text(f"import sys; sys.stdout.buffer.write(b'{text}')\n")
    else:
        script.write_text(f"import sys; sys.stdout.write({text!r})\n")
    cfg = write_eval(tmp_path, factors={"mode": [mode]}, n_cases=1,
                     runner={"type": "cli", "command": f"{sys.executable} {script}",
                             "output_format": "json" if mode != "binary" else "text"})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    (rec,) = records(tmp_path / "runs" / "t")
    assert "internal error" not in str(rec.get("reason")), rec["reason"]
    if mode == "surrogate":
        assert rec["status"] == "ok" and summary.ok == 1
        outputs = json.loads(next((tmp_path / "runs").rglob("outputs.json")).read_text())
        assert outputs["output"] == "bad \ufffd\ufffd\ufffd text"
    elif mode == "nested":
        assert rec["status"] == "errored" and "malformed" in rec["reason"]
    else:
        assert rec["status"] == "ok"
