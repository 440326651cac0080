"""``orchestrate init``: the starter eval is written from package data, validates, and
never overwrites silently."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from eval_harness.starter import TEMPLATE_FILES, scaffold, template_text
from tests.conftest import run_cli


def test_init_writes_a_valid_2x2_starter(tmp_path: Path) -> None:
    code, out, err = run_cli("init", str(tmp_path / "demo"))
    assert code == 0, err
    for name in TEMPLATE_FILES:
        assert f"wrote {tmp_path / 'demo' / name}" in out
    cfg = yaml.safe_load((tmp_path / "demo" / "eval.yaml").read_text())
    factors = cfg["matrix"]["factors"]
    assert len(factors) == 2 and all(len(v) == 2 for v in factors.values())
    assert cfg["runner"]["type"] == "cli"
    kinds = [("check" in j, any(k in j for k in ("contains", "exact_match", "regex")))
             for j in cfg["judges"]]
    assert (True, False) in kinds and (False, True) in kinds  # a check and a built-in
    cases = [json.loads(x) for x in (tmp_path / "demo" / "cases.jsonl").read_text().splitlines()]
    assert len(cases) == 10
    code, out, err = run_cli("--config", str(tmp_path / "demo" / "eval.yaml"), "--dry-run",
                             "--json")
    assert code == 0, err
    grid = json.loads(out)
    assert grid["n_conditions"] == 4 and grid["n_cases"] == 10 and grid["total_runs"] == 40


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text("name: mine\n")
    code, _, err = run_cli("init", str(tmp_path))
    assert code == 2 and "already exist" in err and "--force" in err
    assert (tmp_path / "eval.yaml").read_text() == "name: mine\n"
    assert not (tmp_path / "agent.py").exists()  # nothing half-written
    code, _, err = run_cli("init", str(tmp_path), "--force")
    assert code == 0, err
    assert (tmp_path / "eval.yaml").read_text() == template_text("eval.yaml")


def test_init_into_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    code, _, err = run_cli("init", str(tmp_path / "f"))
    assert code == 2 and "not a directory" in err


def test_scaffold_defaults_to_the_current_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("init")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TEMPLATE_FILES)
    assert [p.name for p in scaffold(tmp_path / "x")] == list(TEMPLATE_FILES)


def test_starter_runs_offline_with_both_judges(starter_runs: Path) -> None:
    records = [json.loads(p.read_text()) for p in starter_runs.glob("*/cases/*/record.json")]
    assert len(records) == 40
    assert all(r["status"] == "ok" for r in records)
    assert {name for r in records for name in r["scores"]} == {"correct", "shows_work"}
    # the agent slips sometimes, so the check judge is not constant
    assert {r["scores"]["correct"]["value"] for r in records} == {True, False}
