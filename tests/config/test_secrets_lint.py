"""Load-time warnings for secrets written literally in the config (never an error)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_harness.config.loader import load_config
from eval_harness.config.secrets_lint import literal_secrets

OPENAI_LIKE = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4"
GITHUB_LIKE = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.parametrize(("raw", "paths"), [
    ({"runner": {"api_key": OPENAI_LIKE}}, ["runner.api_key"]),
    ({"runner": {"headers": {"Authorization": "Bearer abcdefgh12345"}}},
     ["runner.headers.Authorization"]),
    ({"execution": {"env": {"GITHUB_TOKEN": GITHUB_LIKE}}}, ["execution.env.GITHUB_TOKEN"]),
    ({"execution": {"env": {"DB_PASSWORD": "hunter2hunter2"}}}, ["execution.env.DB_PASSWORD"]),
    ({"runner": {"extra_args": ["--key", OPENAI_LIKE]}}, ["runner.extra_args[1]"]),  # by shape
    ({"description": f"uses {GITHUB_LIKE} inside"}, ["description"]),
    # not secrets: references, short values, locators, ordinary keys
    ({"runner": {"api_key": "${OPENAI_API_KEY}"}}, []),
    ({"runner": {"headers": {"Authorization": "Bearer ${TOKEN}"}}}, []),
    ({"runner": {"api_key": "none"}}, []),
    ({"runner": {"api_key_file": "secrets/key.txt", "token_env": "MY_TOKEN_VARIABLE"}}, []),
    ({"runner": {"max_tokens": 4096, "system": "You are a keyword extractor for monkeys."}}, []),
    ({"judges": [{"name": "sk-style", "contains": "task-force"}]}, []),
])
def test_what_is_reported(raw: dict[str, Any], paths: list[str]) -> None:
    found = literal_secrets(raw)
    assert [f.split("`")[1] for f in found] == paths
    for f in found:
        assert "${" in f and OPENAI_LIKE not in f and GITHUB_LIKE not in f


def test_load_warns_names_the_key_and_still_loads(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: x}}\n")
    cfg = {"name": "s", "matrix": {"factors": {"model": ["m"]}},
           "runner": {"type": "openai", "api_key": OPENAI_LIKE}, "dataset": {"path": "cases.yaml"}}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
    with caplog.at_level(logging.WARNING, logger="eval_harness.config"):
        loaded = load_config(tmp_path / "eval.yaml")
    assert loaded.config.runner is not None and loaded.config.runner.api_key == OPENAI_LIKE
    [warning] = loaded.warnings
    assert "`runner.api_key` looks like a credential" in warning and "${RUNNER_API_KEY}" in warning
    assert any("runner.api_key" in r.getMessage() for r in caplog.records)
    assert OPENAI_LIKE not in caplog.text
