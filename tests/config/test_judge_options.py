"""Unknown options of built-in judges are load errors (exit 2) with a did-you-mean hint;
`contains: {al: [...]}` used to pass every sample."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli


def _config(tmp: Path, judge: dict) -> Path:
    (tmp / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "input": {"q": "x"},
                                                     "expected": {"answer": "a"}}]))
    cfg = {"name": "t", "matrix": {"factors": {"model": ["a", "b"]}},
           "runner": {"type": "cli", "command": "/bin/echo {model}"},
           "dataset": {"path": "cases.yaml"}, "judges": [{"name": "j", **judge}]}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


@pytest.mark.parametrize("judge, path, message", [
    ({"contains": {"al": ["x"]}}, "judges[0].contains", "unknown option `al` (did you mean `all`?)"),
    ({"exact_match": {"refrence": "x"}}, "judges[0].exact_match",
     "unknown option `refrence` (did you mean `reference`?)"),
    ({"tool_calls": {"mx": 3}}, "judges[0].tool_calls", "unknown option `mx` (did you mean `max`?)"),
    ({"regex": {"pattern": "a", "flag": "i"}}, "judges[0].regex", "did you mean `flags`?"),
    ({"tool_called": {"nme": "search"}}, "judges[0].tool_called", "did you mean `name`?"),
    ({"latency": {"maximum": 3}}, "judges[0].latency", "unknown option `maximum`"),
    ({"entity_coverage": {"case_sensitiv": True}}, "judges[0].entity_coverage",
     "did you mean `case_sensitive`?"),
])
def test_unknown_builtin_option_is_exit_2_with_path_and_hint(tmp_path: Path, judge: dict,
                                                             path: str, message: str) -> None:
    code, _, err = run_cli("--config", str(_config(tmp_path, judge)), "--dry-run")
    assert code == 2, err
    assert f"{path}: unknown option" in err and message in err
    assert "takes:" in err  # the hint lists the valid options


@pytest.mark.parametrize("judge", [
    {"contains": {"all": ["a"], "any": ["b"], "case_sensitive": True}},
    {"tool_calls": {"budget": {"easy": 3}, "tag": "tier"}},
    {"tool_calls": {"easy": 3, "hard": 5, "tag": "tier"}},  # inline budgets, explicit tag
    {"exact_match": {"strip_punctuation": True}},
    {"json_schema": {"type": "object", "properties": {}}},  # the mapping is the schema
])
def test_known_options_still_load(tmp_path: Path, judge: dict) -> None:
    code, _, err = run_cli("--config", str(_config(tmp_path, judge)), "--dry-run")
    assert code == 0, err
