"""The model-call cache under an LLM judge (issue 34): a reply rejected as a verdict is
never stored (failures are never stored: docs/cost.md), and a stored reply of another
shape is a miss, never a verdict."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import FAST

from eval_harness.cache.active import activated
from eval_harness.cache.store import CallCache
from eval_harness.judges.cache import VerdictCache
from eval_harness.judges.llm.judge import LLMJudge, LLMSettings
from eval_harness.judges.llm.providers import parse_model
from eval_harness.judges.values import JudgeFailure

CTX = {"outputs": {"output": "Paris"}, "input": {"q": "capital?"}, "expected": {}}


def _judge() -> LLMJudge:  # a fresh verdict cache each time: only the call cache remains
    settings = LLMSettings(parse_model("openai:gpt-test"), 0.0, 512, (1.0, 2.0), FAST, True)
    return LLMJudge("quality", "Rate: {{ outputs.output }}", settings, (1.0, 5.0),
                    VerdictCache())


@pytest.mark.parametrize("rejected", [{"verdict": {"reasoning": "great", "score": 7}},
                                      {"content": "not json at all"},
                                      {"refusal": "I can't help with that."}])
def test_a_reply_rejected_as_a_verdict_is_not_cached(stub: Any, tmp_path: Path,
                                                     rejected: dict[str, Any]) -> None:
    calls = CallCache(tmp_path)
    with activated(calls):
        stub.script.append(rejected)
        with pytest.raises(JudgeFailure):
            _judge().evaluate(CTX, 0)
        assert calls.stats()["entries"] == 0
        stub.script.append({"verdict": {"reasoning": "fine", "score": 4}})
        assert _judge().evaluate(CTX, 0).value == 4.0  # the judge was asked again
        assert len(stub.requests) == 2 and calls.stats()["entries"] == 1
        assert _judge().evaluate(CTX, 0).value == 4.0 and len(stub.requests) == 2


@pytest.mark.parametrize("stored", [{"text": None}, {"structured": "4", "text": None},
                                    {"planted": 1}])
def test_a_stored_judge_reply_of_another_shape_is_a_miss(stub: Any, tmp_path: Path,
                                                         stored: dict[str, Any]) -> None:
    calls = CallCache(tmp_path)
    with activated(calls):
        stub.script.append({"verdict": {"reasoning": "fine", "score": 4}})
        assert _judge().evaluate(CTX, 0).value == 4.0
    db = sqlite3.connect(tmp_path / "calls.sqlite3")
    db.execute("UPDATE calls SET value = ?", (json.dumps(stored),))
    db.commit()
    db.close()
    with activated(calls):
        stub.script.append({"verdict": {"reasoning": "again", "score": 3}})
        outcome = _judge().evaluate(CTX, 0)
    assert outcome.value == 3.0 and len(stub.requests) == 2 and "cache_hit" not in outcome.meta
