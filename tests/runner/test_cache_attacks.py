"""Issue 34's minor cache attacks, end to end through the CLI against the billing stub:
another version's database, a stored value of another shape, the files' modes."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cost_helpers import records, write_cost_eval


def _run(cli, cfg: Path, runs: Path) -> tuple[int, str]:
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(runs), "--no-analysis",
                       "--concurrency", "2")
    return code, err


def test_another_versions_database_is_one_line_with_a_hint_not_errored_cells(
        tmp_path, billing, cli, _private_call_cache):
    db = sqlite3.connect(_private_call_cache / "calls.sqlite3")
    db.executescript("CREATE TABLE calls (key TEXT PRIMARY KEY, reply BLOB);"
                     "CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);"
                     "INSERT INTO meta VALUES ('schema_version', '7');")
    db.commit()
    db.close()
    cfg = write_cost_eval(tmp_path, billing)
    code, err = _run(cli, cfg, tmp_path / "a")
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if "schema version 7" in ln]
    assert len(lines) == 1 and "hint:" in lines[0] and "cache clear" in lines[0], err
    assert not billing.calls("runner") and not (tmp_path / "a" / "cost").exists()
    # the hint works: `cache clear` empties it into this version's schema, then it runs
    code, _out, err = cli("cache", "clear", "--cache-dir", str(_private_call_cache))
    assert code == 0, err
    code, err = _run(cli, cfg, tmp_path / "b")
    assert code == 0, err
    assert all(r["status"] == "ok" for r in records(tmp_path / "b" / "cost").values())


@pytest.mark.parametrize("stored", [{}, {"output": 5}, {"output": "forged", "exit_code": "0"},
                                    {"output": "forged", "steps": "not steps"},
                                    {"output": "forged", "planted": True}, ["a", "list"]])
def test_a_stored_value_of_another_shape_is_a_miss_never_an_answer(
        tmp_path, billing, cli, _private_call_cache, stored):
    cfg = write_cost_eval(tmp_path, billing, n_cases=2)
    assert _run(cli, cfg, tmp_path / "a")[0] == 0
    db = sqlite3.connect(_private_call_cache / "calls.sqlite3")
    db.execute("UPDATE calls SET value = ? WHERE kind = 'runner'", (json.dumps(stored),))
    db.commit()
    db.close()
    before = len(billing.calls("runner"))
    code, err = _run(cli, cfg, tmp_path / "b")
    assert code == 0, err
    assert len(billing.calls("runner")) == before + 4  # every cell called again
    for rec in records(tmp_path / "b" / "cost").values():
        assert rec["status"] == "ok" and "cache_hit" not in rec
    answers = [json.loads(p.read_text())["output"]
               for p in (tmp_path / "b" / "cost").glob("*/cases/*/outputs.json")]
    assert len(answers) == 4 and all(a.startswith("answer-c0") for a in answers)
    # and the next run replays the fresh, well-formed replies
    code, err = _run(cli, cfg, tmp_path / "c")
    assert code == 0 and "4 of 4 calls from cache" in err, err


def test_the_cache_folder_is_0700_and_its_database_0600(tmp_path, billing, cli, monkeypatch):
    home = tmp_path / "xdg" / "eval_harness"
    monkeypatch.setenv("EVAL_HARNESS_CACHE_DIR", str(home))
    cfg = write_cost_eval(tmp_path, billing, n_cases=1)
    code, err = _run(cli, cfg, tmp_path / "a")
    assert code == 0, err
    assert home.stat().st_mode & 0o777 == 0o700
    files = [p for p in home.iterdir() if p.name.startswith("calls.sqlite3")]
    assert files and all(p.stat().st_mode & 0o777 == 0o600 for p in files), files
    # a database an older version left world-readable is made private on the next open
    (home / "calls.sqlite3").chmod(0o644)
    assert _run(cli, cfg, tmp_path / "b")[0] == 0
    assert (home / "calls.sqlite3").stat().st_mode & 0o777 == 0o600
