"""--dry-run checks what it can: a check that never returns, template fields missing from
the cases, case ids that cannot be folder names (each used to pass dry-run)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import run_cli


def _config(tmp: Path, judges: list[dict[str, Any]], cases: list[dict[str, Any]] | None = None,
            **extra: Any) -> Path:
    cases = cases or [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "a"}},
                      {"id": "c2", "input": {"q": "y"}, "expected": {"answer": "b"}}]
    (tmp / "cases.yaml").write_text(yaml.safe_dump(cases))
    cfg = {"name": "t", "matrix": {"factors": {"model": ["a", "b"]}},
           "runner": {"type": "cli", "command": "/bin/echo {model} {q}"},
           "dataset": {"path": "cases.yaml"}, "judges": judges, **extra}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


@pytest.mark.parametrize("body", [
    "ok = 'a' in outputs['output']\n",
    "def helper():\n    return 1\nok = helper()\n",  # a nested return is not the check's
    "if outputs['output']:\n    return\n",  # a bare return gives None
])
def test_check_that_never_returns_a_value_fails_dry_run(tmp_path: Path, body: str) -> None:
    code, _, err = run_cli("--config", str(_config(tmp_path, [{"name": "j", "check": body}])),
                           "--dry-run")
    assert code == 2, err
    assert "judges[0](j).check: check code never returns a value" in err
    assert "return value, why" in err


def test_check_returning_on_some_path_passes(tmp_path: Path) -> None:
    body = "if outputs['output']:\n    return True, 'x'\nreturn False, 'empty'\n"
    code, _, err = run_cli("--config", str(_config(tmp_path, [{"name": "j", "check": body}])),
                           "--dry-run")
    assert code == 0, err


@pytest.mark.parametrize("judge, where, field", [
    ({"contains": "{{ expected.nope }}"}, "judges[0](j).contains", "expected.nope"),
    ({"contains": {"all": ["{{ input.nope }}"]}}, "judges[0](j).contains", "input.nope"),
    ({"prompt": "Rate {{ expected.answr }}", "model": "openai:m"}, "judges[0](j).prompt",
     "expected.answr"),
    ({"exact_match": {"reference": "{{ expected.ref }}"}}, "judges[0](j).exact_match",
     "expected.ref"),
])
def test_template_fields_missing_from_the_cases_fail_dry_run(tmp_path: Path, judge: dict,
                                                            where: str, field: str) -> None:
    code, _, err = run_cli("--config", str(_config(tmp_path, [{"name": "j", **judge}])),
                           "--dry-run")
    assert code == 2, err
    assert f"{where}: template references `{field}`" in err


def test_expected_field_present_in_every_case_passes(tmp_path: Path) -> None:
    judges = [{"name": "j", "contains": "{{ expected.answer }}"}]
    code, _, err = run_cli("--config", str(_config(tmp_path, judges)), "--dry-run")
    assert code == 0, err


@pytest.mark.parametrize("case_id, why", [
    ("x" * 300, "300 bytes long"),
    (".hidden", "starts with a dot"),
    ("trailing.", "ends with a dot"),
    ("CON", "reserved device name"),
    ("nul.txt", "reserved device name"),
    ("lpt1", "reserved device name"),
])
def test_case_ids_that_cannot_be_folders_fail_dry_run(tmp_path: Path, case_id: str,
                                                      why: str) -> None:
    cases = [{"id": case_id, "input": {"q": "x"}, "expected": {"answer": "a"}}]
    cfg = _config(tmp_path, [{"name": "j", "exact_match": True}], cases)
    code, _, err = run_cli("--config", str(cfg), "--dry-run")
    assert code == 2, err
    assert why in err and "[0].id" in err
