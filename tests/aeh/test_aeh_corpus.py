"""The agent-eval-harness config corpus (tests/aeh/corpus) loads as that tool loads it.

The configs are written by ``corpus/make_corpus.py`` in the shapes of that tool's docs
and test suite. ``corpus/expected.json`` was recorded once, outside this repository,
by running agent-eval-harness 1.41.0's own loader on each file in a scratch virtualenv:
``EvalConfig.from_yaml`` (accepted or the error it raised), ``eval_name()``,
``MatrixBuilder.from_yaml(strict=True)`` + ``expand_full_factorial`` (condition ids and
levels) and its orchestrator's ``_map_factors`` (the routing of each condition). The tool
itself is not needed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval_harness.matrix.experiment import prepare
from tests.conftest import run_cli

CORPUS = Path(__file__).parent / "corpus"
EXPECTED: dict[str, dict[str, Any]] = json.loads((CORPUS / "expected.json").read_text())
ACCEPTED = sorted(k for k, v in EXPECTED.items() if v["accepted"])
REJECTED = sorted(k for k, v in EXPECTED.items() if not v["accepted"])
ENV = {"AEH_CORPUS_TOKEN": "t0ken", "AEH_CORPUS_JIRA": "http://localhost:9"}


def _argv(rel: str) -> list[str]:
    exp = EXPECTED[rel]
    argv = ["--config", str(CORPUS / rel), "--dry-run", "--json", "--no-judge-check"]
    names_model = exp.get("models_skill") or any(
        "model" in c["levels"] for c in exp.get("conditions") or [])
    return argv if names_model else [*argv, "--model", "claude-sonnet-4-6"]


def _dry_run(rel: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(CORPUS / rel.split("/")[0])
    return run_cli(*_argv(rel))


def test_corpus_size() -> None:
    assert len(EXPECTED) >= 100 and len(ACCEPTED) >= 100 and len(REJECTED) >= 20


def test_accepted_configs_pass_dry_run_with_its_names_and_grids(
        monkeypatch: pytest.MonkeyPatch) -> None:
    failures: dict[str, str] = {}
    for rel in ACCEPTED:
        exp = EXPECTED[rel]
        code, out, err = _dry_run(rel, monkeypatch)
        if code != 0:
            failures[rel] = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
            continue
        doc = json.loads(out)
        assert doc["eval"] == exp["eval_name"], rel  # the same runs/<eval_name>/ folder
        if exp["conditions"] is not None:
            ours = {c["condition_id"]: c["levels"] for c in doc["conditions"]}
            theirs = {c["condition_id"]: c["levels"] for c in exp["conditions"]}
            assert ours == theirs, rel
    rate = 1 - len(failures) / len(ACCEPTED)
    assert rate >= 0.95, failures  # the acceptance bar; today every config passes
    assert not failures, failures


@pytest.mark.parametrize("rel", [r for r in ACCEPTED if EXPECTED[r]["conditions"]][::4])
def test_routing_equals_its_orchestrator(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(CORPUS / rel.split("/")[0])
    exp = prepare(CORPUS / rel, overrides=None if EXPECTED[rel].get("models_skill") else
                  {"models": {"skill": "claude-sonnet-4-6"}}, env=dict(ENV))
    by_id = {c.condition_id: c for c in exp.conditions}
    for want in EXPECTED[rel]["conditions"]:
        got = by_id[want["condition_id"]]
        model = got.model if got.model is not None else exp.effective[got.condition_id].models.skill
        if want["model"] is not None:
            assert str(model) == want["model"]
        assert got.effort == want["effort"]
        assert got.subagent_model == want["subagent_model"]
        assert sorted(got.input_overrides) == want["overrides"]


@pytest.mark.parametrize("rel", REJECTED, ids=lambda r: Path(r).stem)
def test_configs_it_rejects_exit_2(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = _dry_run(rel, monkeypatch)
    assert code == 2, (rel, EXPECTED[rel]["error"], err[-300:])
    assert "Traceback" not in err


def test_runner_type_is_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_harness.config.loader import load_config

    monkeypatch.chdir(CORPUS / "configs")
    for rel in ACCEPTED[::3]:
        cfg = load_config(CORPUS / rel, env=ENV).config
        assert cfg.runner is not None and cfg.runner.type == EXPECTED[rel]["runner_type"], rel
