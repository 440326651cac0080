"""``--dry-run --shard K/N`` shows that shard's cells (the ones a run of it plans), and a
GitHub fan-out over more shards than a matrix can run is refused with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.runner.runner_helpers import agent_command, write_eval


def _eval(tmp_path: Path) -> Path:
    return write_eval(tmp_path, factors={"mode": ["correct", "wrong"], "x": [1, 2]},
                      runner={"type": "cli", "command": agent_command()}, n_cases=5,
                      replications=2)


def _shard(path: Path, runs: Path, spec: str, *extra: str) -> dict:
    code, out, err = run_cli("--config", str(path), "--dry-run", "--json", "--runs-dir",
                             str(runs), "--shard", spec, *extra)
    assert code == 0, err
    return json.loads(out)


def test_shards_partition_the_matrix_and_match_what_a_run_plans(tmp_path: Path) -> None:
    path, runs = _eval(tmp_path), tmp_path / "runs"
    shards = [_shard(path, runs, f"{k}/3")["shard"] for k in (1, 2, 3)]
    keys = [{(c["condition_id"], c["case_id"], c["replication"]) for c in s["cells"]}
            for s in shards]
    assert sum(map(len, keys)) == len(set().union(*keys)) == 4 * 5 * 2  # disjoint, complete
    assert [s["runs"] for s in shards] == [len(k) for k in keys]
    # the same shard, run for real: exactly the cells the dry-run listed get a record
    code, _, err = run_cli("--config", str(path), "--runs-dir", str(runs), "--shard", "2/3",
                           "--no-analysis", "--no-judge-check")
    assert code == 0, err
    written = {(json.loads(p.read_text())["condition_id"], p.parent.name,
                json.loads(p.read_text())["replication"])
               for p in (runs / "t").glob("*/cases/*/record.json")}
    assert written == keys[1]
    again = _shard(path, runs, "2/3")["shard"]
    assert (again["to_run"], again["skipped_complete"]) == (0, len(keys[1]))
    assert _shard(path, runs, "1/3")["shard"]["to_run"] == len(keys[0])


def test_console_view_names_the_shard_and_its_cells(tmp_path: Path) -> None:
    code, out, err = run_cli("--config", str(_eval(tmp_path)), "--dry-run", "--runs-dir",
                             str(tmp_path / "runs"), "--shard", "1/4")
    assert code == 0, err
    assert "shard 1/4: 12 runs" in out and " r1" in out and "c00" in out


def test_more_than_256_shards_refused_for_github(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = _eval(tmp_path)
    code, _, err = run_cli("--config", str(path), "--dry-run", "--shard", "1/300",
                           "--ci", "github")
    assert code == 2 and "GitHub Actions matrix runs at most 256 jobs" in err
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, _, err = run_cli("--config", str(path), "--dry-run", "--shard", "1/257")
    assert code == 2 and "shards 257-257 would never run" in err
    assert run_cli("--config", str(path), "--dry-run", "--shard", "1/256")[0] == 0
    assert run_cli("--config", str(path), "--dry-run", "--shard", "1/300", "--ci", "none")[0] == 0


def test_slurm_resubmit_dry_run_shows_the_original_shard(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # `sbatch --array=3 job.sh` of a script with `#SBATCH --array=0-7`, EVAL_SHARD_TOTAL=8
    for name, value in {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "3",
                        "SLURM_ARRAY_TASK_MAX": "3", "SLURM_ARRAY_TASK_COUNT": "1",
                        "EVAL_SHARD_TOTAL": "8"}.items():
        monkeypatch.setenv(name, value)
    for name in ("EVAL_SHARD", "EVAL_SHARD_INDEX", "JOB_COMPLETION_INDEX"):
        monkeypatch.delenv(name, raising=False)
    shard = _shard(_eval(tmp_path), tmp_path / "runs", "auto")["shard"]
    assert shard["shard"] == "4/8" and shard["runs"] == 4  # unit 3 of 10: one case, 4 conditions
    monkeypatch.delenv("EVAL_SHARD_TOTAL")
    code, _, err = run_cli("--config", str(_eval(tmp_path)), "--dry-run", "--shard", "auto")
    assert code == 2 and "only task" in err
