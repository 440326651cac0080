"""Resume: skip complete cells, --force, --retry-errors, new levels/replications, stale digests."""
from __future__ import annotations

import json
from pathlib import Path

import yaml
from runner_helpers import FakeScorer, agent_command, options, records, write_eval

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import execute


def _cfg(tmp: Path, modes: list[str], reps: int = 1) -> Path:
    return write_eval(tmp, factors={"mode": modes}, n_cases=3, replications=reps,
                      runner={"type": "cli", "command": agent_command(), "output_format": "json"})


def test_resume_force_retry_errors_and_growth(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cfg = _cfg(tmp_path, ["correct", "exit"])
    first = execute(prepare(cfg), FakeScorer(), options(runs))
    assert (first.ok, first.errored) == (3, 3)

    again = execute(prepare(cfg), FakeScorer(), options(runs))
    assert again.plan.todo == [] and again.plan.skipped_complete == 3
    assert again.plan.skipped_errored == 3

    retry = execute(prepare(cfg), FakeScorer(), options(runs, retry_errors=True))
    assert len(retry.plan.todo) == 3 and {c.condition.levels["mode"] for c in retry.plan.todo} == {"exit"}

    force = execute(prepare(cfg), FakeScorer(), options(runs, force=True))
    assert len(force.plan.todo) == 6
    assert len(records(runs / "t")) == 6  # overwritten in place, never duplicated

    grown = execute(prepare(_cfg(tmp_path, ["correct", "exit", "slow"], reps=2)), FakeScorer(),
                    options(runs))
    # new level: 3 cases x 2 reps; new replication of the old levels: 2 x 3
    assert len(grown.plan.todo) == 12
    assert len(records(runs / "t")) == 18
    keys = [(r["condition_id"], r["replication"], r["case_id"]) for r in records(runs / "t")]
    assert len(set(keys)) == 18
    assert len(list((runs / "t").glob("*/run.json"))) == 6  # one dir per (condition, rep)


def test_changed_config_reruns_stale_cells_in_place(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cfg = _cfg(tmp_path, ["correct"])
    execute(prepare(cfg), FakeScorer(), options(runs))
    old = {r["case_id"]: r["config_digest"] for r in records(runs / "t")}
    data = yaml.safe_load(cfg.read_text())
    data["execution"]["env"] = {"NEW_FLAG": "1"}  # changes what runs -> new digest
    cfg.write_text(yaml.safe_dump(data))
    stale = execute(prepare(cfg), FakeScorer(), options(runs))
    assert stale.plan.stale == 3 and len(stale.plan.todo) == 3
    recs = records(runs / "t")
    assert len(recs) == 3 and all(r["config_digest"] != old[r["case_id"]] for r in recs)
    # a runtime knob (timeout) does not invalidate anything
    data["execution"]["timeout"] = 99
    cfg.write_text(yaml.safe_dump(data))
    assert execute(prepare(cfg), FakeScorer(), options(runs)).plan.todo == []


def test_scorer_exception_keeps_the_case_as_errored(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    summary = execute(prepare(_cfg(tmp_path, ["correct"])), FakeScorer(raise_for={"c01"}),
                      options(runs))
    recs = {r["case_id"]: r for r in records(summary.eval_dir)}
    assert recs["c01"]["status"] == "errored"
    assert recs["c01"]["reason"] == "scoring failed: RuntimeError: judge exploded"
    assert recs["c01"]["scores"] == {} and recs["c00"]["status"] == "ok"
    # the run itself is on disk for a later rescore
    out = json.loads((summary.eval_dir / recs["c01"]["run_id"] / "cases/c01/outputs.json").read_text())
    assert out["output"] == "answer-c01"


def test_condition_filter_runs_only_matching_cells(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cfg = _cfg(tmp_path, ["correct", "wrong"])
    only = execute(prepare(cfg, condition_specs=["mode=wrong"]), FakeScorer(), options(runs))
    assert {c.condition.levels["mode"] for c in only.plan.todo} == {"wrong"}
    rest = execute(prepare(cfg), FakeScorer(), options(runs))
    assert {c.condition.levels["mode"] for c in rest.plan.todo} == {"correct"}
