"""Issue 22: LLM judges read only OPENAI_BASE_URL; two judges on two OpenAI-compatible
endpoints were impossible, and a failure did not name the URL it tried. Now each judge may
name its own base_url / api_key (${VAR} only), falling back to models.judge_base_url /
models.judge_api_key, then the environment; every connection error names the URL."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from judge_helpers import FAST, make_experiment, sample
from llm_stub import LLMStub

from eval_harness.errors import ConfigError
from eval_harness.judges.llm.chat_call import reset_capabilities
from eval_harness.judges.llm.providers import shown_url
from eval_harness.judges.scorer import JudgeScorer, build_scorer

VERDICT = {"verdict": {"reasoning": "fine", "verdict": True}}


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_judges_on_two_endpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reset_capabilities()
    dead = f"http://127.0.0.1:{_dead_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", dead)  # the environment is the last fallback
    monkeypatch.setenv("KEY_A", "sk-a")
    monkeypatch.setenv("KEY_B", "sk-b")
    with LLMStub() as a, LLMStub() as b:
        a.script.append(VERDICT)
        b.script.append(VERDICT)
        exp = make_experiment(tmp_path, [
            {"name": "ja", "prompt": "Is {{ outputs.output }} right?", "model": "openai:m-a",
             "base_url": a.openai_base, "api_key": "${KEY_A}"},
            {"name": "jb", "prompt": "Is {{ outputs.output }} right?", "model": "openai:m-b"},
        ], models={"judge_base_url": b.openai_base, "judge_api_key": "${KEY_B}"})
        scores = JudgeScorer(exp, build_scorer(exp).cache, FAST).score(sample(exp)).scores
        assert scores["ja"].value is True and scores["jb"].value is True
        assert [r["headers"]["authorization"] for r in a.requests] == ["Bearer sk-a"]
        assert [r["headers"]["authorization"] for r in b.requests] == ["Bearer sk-b"]


def test_a_connection_error_names_the_url(tmp_path: Path) -> None:
    reset_capabilities()
    url = f"http://user:secret@127.0.0.1:{_dead_port()}/v1"
    exp = make_experiment(tmp_path, [{"name": "j", "prompt": "ok? {{ outputs.output }}",
                                      "model": "openai:m", "base_url": url}])
    score = JudgeScorer(exp, build_scorer(exp).cache, FAST).score(sample(exp)).scores["j"]
    assert score.errored
    shown = shown_url(url + "/chat/completions")
    assert shown.startswith("http://127.0.0.1:") and shown.endswith("/v1/chat/completions")
    assert shown in str(score.error) and "secret" not in str(score.error)


def test_a_literal_judge_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment reference") as info:
        make_experiment(tmp_path, [{"name": "j", "prompt": "x", "model": "openai:m",
                                    "api_key": "sk-literal"}])
    assert "judges[0].api_key" in str(info.value)
