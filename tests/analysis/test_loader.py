"""Loader: run directories (this tool's and agent-eval-harness's) → the tidy frame."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rundir_writer import write_aeh, write_native

from eval_harness import load_runs as public_load_runs
from eval_harness.analysis.loading.tidy_frame import COLUMNS_HEAD, COLUMNS_TAIL, load_runs
from eval_harness.errors import UsageError

AEH = Path(__file__).resolve().parents[1] / "fixtures" / "aeh_runs"
# agent-eval-harness's rule (the gate, otherwise solution_quality) = a gate of weight 0
AEH_SPECS = {"tests_pass": {"gate": True, "weight": 0}, "solution_quality": {"score_range": [1, 5]}}

DATA = {
    ("m1", "low"): {"c1": [{"ok": True, "q": 4}, {"ok": True, "q": 5}], "c2": [{"ok": False, "q": 2}, None]},
    ("m1", "high"): {"c1": [{"ok": True, "q": 3}, {"ok": True, "q": 3}], "c2": [{"ok": True, "q": "ERR"}, {"ok": False, "q": 1}]},
    ("m2", "low"): {"c1": [{"ok": False, "q": 2}, {"ok": True, "q": 2}], "c2": [{"ok": True, "q": 5}, {"ok": True, "q": 4}]},
    ("m2", "high"): {"c1": [{"ok": True, "q": 1}, {"ok": True, "q": 5}], "c2": [{"ok": False, "q": 3}, {"ok": True, "q": 3}]},
}


def _native(tmp_path: Path, **kw: object) -> Path:
    write_native(tmp_path / "runs", DATA, ["model", "effort"], ranges={"q": [1, 5]}, **kw)  # type: ignore[arg-type]
    return tmp_path / "runs"


def test_columns_and_attrs_follow_the_tidy_contract(tmp_path: Path) -> None:
    df = load_runs(_native(tmp_path))
    assert list(df.columns) == [*COLUMNS_HEAD, "model", "effort", *COLUMNS_TAIL]
    assert df.attrs["factors"] == ["model", "effort"]
    assert df.attrs["levels"] == {"model": ["m1", "m2"], "effort": ["high", "low"]}
    # 4 conditions x 2 cases x 2 replications = 16 samples, each: 2 judges + composite,
    # except the one whose run errored (no judge ran): only its composite row
    assert len(df) == 15 * 3 + 1
    assert sorted(df["replication"].unique()) == [1, 2]
    assert set(df["judge"]) == {"ok", "q", "composite"}


def test_booleans_are_01_and_errors_are_never_zero(tmp_path: Path) -> None:
    df = load_runs(_native(tmp_path))
    ok = df[df["judge"] == "ok"]
    assert set(ok["value"].dropna()) <= {0.0, 1.0}
    assert (ok["kind"] == "boolean").all()
    # the errored case (m1, low, c2, rep 2): every row errored with NaN values
    crashed = df[(df["model"] == "m1") & (df["effort"] == "low") & (df["case_id"] == "c2") & (df["replication"] == 2)]
    assert len(crashed) == 1 and crashed["errored"].all() and crashed["value"].isna().all()
    assert (crashed["case_status"] == "errored").all()
    # the errored judge (m1, high, c2, rep 1): NaN, errored, and the composite errored too
    j = df[(df["model"] == "m1") & (df["effort"] == "high") & (df["case_id"] == "c2") & (df["replication"] == 1)]
    assert j.set_index("judge").loc["q", "errored"] and np.isnan(j.set_index("judge").loc["q", "value"])
    assert j.set_index("judge").loc["composite", "errored"]


def test_numeric_normalised_by_recorded_range(tmp_path: Path) -> None:
    df = load_runs(_native(tmp_path))
    q = df[(df["judge"] == "q") & ~df["errored"]]
    np.testing.assert_allclose(q["normalized"], (q["value"] - 1) / 4)


def test_aeh_fixture_without_config_is_scored_by_its_rule(tmp_path: Path) -> None:
    df = load_runs(AEH)
    assert df.attrs["factors"] == ["model", "context"]
    assert df.attrs["formats"] == ["agent-eval-harness"]
    assert len(df) == 2 * 4 * 3
    wide = df.pivot_table(index=["context", "case_id"], columns="judge", values="value",
                          observed=True)
    # agent-eval-harness: boolean gates, numbers over its default 1-5 scale
    expected = np.where(wide["tests_pass"] == 1.0, (wide["solution_quality"] - 1) / 4, 0.0)
    np.testing.assert_allclose(wide["composite"], expected)
    assert any(i["kind"] == "scoring" and "[1, 5]" in i["detail"] for i in df.attrs["issues"])
    # recorded ids are kept although they are not this tool's hashes
    assert set(df["condition_id"]) == {"sonnet-cognee", "sonnet-none"}
    assert {r["cost_usd"] for r in df.attrs["run_costs"]} == {0.14}
    assert df["cost_usd"].isna().all()  # a run total is never spread over cases


def test_aeh_fixture_with_config_gates_on_tests_pass() -> None:
    df = load_runs(AEH, judge_specs=AEH_SPECS)
    wide = df.pivot_table(index=["context", "case_id"], columns="judge", values="value",
                          observed=True)
    expected = np.where(wide["tests_pass"] == 1.0, (wide["solution_quality"] - 1) / 4, 0.0)
    np.testing.assert_allclose(wide["composite"], expected)


def test_a_weighted_gate_also_enters_the_mean_as_the_judges_stage_does() -> None:
    specs = {"tests_pass": {"gate": True}, "solution_quality": {"score_range": [1, 5], "weight": 3}}
    df = load_runs(AEH, judge_specs=specs)
    wide = df.pivot_table(index=["context", "case_id"], columns="judge", values="value",
                          observed=True)
    sq = (wide["solution_quality"] - 1) / 4
    expected = np.where(wide["tests_pass"] == 1.0, (1.0 + 3 * sq) / 4, 0.0)
    np.testing.assert_allclose(wide["composite"], expected)


def test_aeh_directories_with_same_levels_are_replications(tmp_path: Path) -> None:
    data = {("a",): {"c1": [{"s": 1.0}, {"s": 2.0}, {"s": 3.0}]}, ("b",): {"c1": [{"s": 1.0}]}}
    write_aeh(tmp_path, data, ["f"])
    df = load_runs(tmp_path)
    reps = df[(df["f"] == "a") & (df["judge"] == "s")].sort_values("replication")
    assert list(reps["replication"]) == [1, 2, 3]
    assert list(reps["value"]) == [1.0, 2.0, 3.0]


def test_identical_copies_in_two_roots_are_counted_once(tmp_path: Path) -> None:
    root = _native(tmp_path)
    shutil.copytree(root, tmp_path / "ci-job-2")
    single = load_runs(root)
    merged = load_runs([root, tmp_path / "ci-job-2"])
    assert len(merged) == len(single)
    dups = [i for i in merged.attrs["issues"] if i["kind"] == "duplicate"]
    assert sum(i["count"] for i in dups) == 16
    assert not [i for i in merged.attrs["issues"] if i["kind"] == "conflict"]


def test_the_same_root_twice_is_read_once(tmp_path: Path) -> None:
    root = _native(tmp_path)
    assert len(load_runs([root, root])) == len(load_runs(root))


def _rewrite(path: Path, **changes: object) -> None:
    rec = json.loads(path.read_text())
    rec.update(changes)
    path.write_text(json.dumps(rec))


@pytest.mark.parametrize("later", [True, False])
def test_conflicting_copy_keeps_the_newest(tmp_path: Path, later: bool) -> None:
    root = _native(tmp_path)
    other = tmp_path / "z-ci-job-2"
    shutil.copytree(root, other)
    run = next(p for p in (other / "demo").iterdir() if p.name.endswith("-r1"))
    rec_path = run / "cases" / "c1" / "record.json"
    stamp = "2026-02-01T00:00:00Z" if later else "2025-12-01T00:00:00Z"
    _rewrite(rec_path, composite=0.123, finished_at=stamp)
    df = load_runs([root, other])
    assert len(df) == len(load_runs(root))
    cid = json.loads((run / "run.json").read_text())["condition_id"]
    row = df[(df["condition_id"] == cid) & (df["case_id"] == "c1") & (df["replication"] == 1)
             & (df["judge"] == "composite")]
    assert len(row) == 1
    assert bool(row["value"].iloc[0] == 0.123) is later
    conflicts = [i for i in df.attrs["issues"] if i["kind"] == "conflict"]
    assert len(conflicts) == 1 and conflicts[0]["count"] == 1 and conflicts[0]["cases"] == ["c1"]
    kept = str(other) if later else str(root)
    assert kept in conflicts[0]["detail"].split("from ")[-1]


def test_runs_without_levels_are_listed_and_left_out(tmp_path: Path) -> None:
    root = _native(tmp_path)
    stray = root / "demo" / "stray-run"
    (stray / "cases" / "c1").mkdir(parents=True)
    (stray / "run.json").write_text(json.dumps({"eval": "demo", "run_id": "stray-run", "condition_id": "x", "levels": {}}))
    (stray / "cases" / "c1" / "record.json").write_text(json.dumps({"case_id": "c1", "composite": 1.0}))
    df = load_runs(root)
    assert "stray-run" not in set(df["run_id"])
    assert [i for i in df.attrs["issues"] if i["kind"] == "no_levels" and "stray-run" in i["detail"]]
    assert len(df) == 46


def test_runs_with_other_factors_are_left_out(tmp_path: Path) -> None:
    root = _native(tmp_path)
    write_native(tmp_path / "runs", {("m3",): {"c1": [{"ok": True, "q": 3}]}}, ["model"], ranges={"q": [1, 5]})
    df = load_runs(root)
    assert "m3" not in set(df["model"])
    assert [i for i in df.attrs["issues"] if i["kind"] == "inconsistent_factors"]


def test_composite_formed_from_record_fields_when_missing(tmp_path: Path) -> None:
    root = _native(tmp_path, with_composite=False, gates=["ok"])
    df = load_runs(root)
    wide = df[~df["errored"] | (df["judge"] == "composite")].pivot_table(
        index=["model", "effort", "case_id", "replication"], columns="judge", values="value",
        observed=True)
    wide = wide.dropna(subset=["q"])
    expected = np.where(wide["ok"] == 1.0, (1.0 + (wide["q"] - 1) / 4) / 2, 0.0)
    np.testing.assert_allclose(wide["composite"], expected)


def test_factor_levels_from_config_set_the_order(tmp_path: Path) -> None:
    df = load_runs(_native(tmp_path), factor_levels={"effort": ["low", "high"], "model": ["m2", "m1"]})
    assert df.attrs["factors"] == ["effort", "model"]
    assert df.attrs["levels"] == {"effort": ["low", "high"], "model": ["m2", "m1"]}


def test_public_api_and_bad_path(tmp_path: Path) -> None:
    assert len(public_load_runs(_native(tmp_path))) == 46
    with pytest.raises(UsageError):
        load_runs(tmp_path / "missing")


def test_yaml_types_of_levels_are_kept(tmp_path: Path) -> None:
    write_native(tmp_path, {(3, True): {"c": [{"s": 1.0}]}, (10, True): {"c": [{"s": 2.0}]}}, ["n", "flag"],
                 ranges={"s": [0, 2]})
    df = load_runs(tmp_path)
    assert df.attrs["levels"] == {"n": [3, 10], "flag": [True]}
    assert {type(v) for v in df["n"]} == {int}


def test_worker_processes_give_the_same_frame(tmp_path: Path) -> None:
    root = _native(tmp_path)
    shutil.copytree(root, tmp_path / "ci-job-2")
    roots = [root, tmp_path / "ci-job-2"]
    serial = load_runs(roots, workers=1)
    parallel = load_runs(roots, workers=2)  # 16 runs: above the parallel threshold
    pd.testing.assert_frame_equal(serial, parallel)
    assert serial.attrs["issues"] == parallel.attrs["issues"]


def test_judge_specs_from_a_config() -> None:
    from eval_harness.config.judge_model import JudgeBlock
    from eval_harness.config.models import EvalConfig
    from eval_harness.judges.composite import coerce_judge_specs

    cfg = EvalConfig(
        name="e",
        judges=[JudgeBlock(name="q", prompt="x", score_range=[1, 5]),
                JudgeBlock(name="ok", check="return True, ''", gate=True),
                JudgeBlock(name="pw", pairwise={"a": 1})],
        composite={"weights": {"q": 2.0}},  # type: ignore[arg-type]
    )
    specs = coerce_judge_specs(cfg)
    assert specs is not None
    assert specs["q"].score_range == (1.0, 5.0) and specs["q"].weight == 2.0
    assert specs["ok"].gate and specs["pw"].pairwise
    aeh_cfg = EvalConfig(name="e", judges=[
        JudgeBlock(name="solution_quality", prompt="x", score_range=[1, 5]),
        JudgeBlock(name="tests_pass", check="return True, ''", gate=True, weight=0)])
    via_config = load_runs(AEH, judge_specs=aeh_cfg)
    via_dict = load_runs(AEH, judge_specs=AEH_SPECS)
    pd.testing.assert_series_equal(via_config["value"], via_dict["value"])
    assert via_config[via_config["judge"] == "composite"]["value"].notna().all()


def test_booleans_only_gate_as_agent_eval_harness_does(tmp_path: Path) -> None:
    # agent-eval-harness: every boolean judge is a gate; all passing gates score 1
    data = {("a",): {"c1": [{"x": True, "y": False}]}, ("b",): {"c1": [{"x": True, "y": True}]}}
    write_aeh(tmp_path, data, ["f"])
    df = load_runs(tmp_path)
    comp = df[df["judge"] == "composite"].set_index("f")["value"]
    assert comp.to_dict() == {"a": 0.0, "b": 1.0}
    assert any(i["kind"] == "scoring" and "gate" in i["detail"] for i in df.attrs["issues"])


def _run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/*/run.json"))


@pytest.mark.parametrize("damage", ["truncated", "not an object", "replication 1e20",
                                    "replication text", "bad utf-8"])
def test_a_damaged_run_json_leaves_that_run_out_with_a_note(tmp_path: Path, damage: str) -> None:
    root = _native(tmp_path)
    victim = _run_dirs(root)[0]
    run_json = victim / "run.json"
    meta = json.loads(run_json.read_text())
    if damage == "truncated":
        run_json.write_text(run_json.read_text()[:25])
    elif damage == "not an object":
        run_json.write_text("[1, 2]")
    elif damage == "bad utf-8":
        run_json.write_bytes(b'{"run_id": "\xff\xfe"}')
    else:
        meta["replication"] = 10**20 if damage == "replication 1e20" else "two"
        run_json.write_text(json.dumps(meta))
    df = load_runs(root)
    notes = [i["detail"] for i in df.attrs["issues"] if i["kind"] == "unreadable_run"]
    assert len(notes) == 1 and str(victim) in notes[0] and notes[0].endswith("left out")
    assert victim.name not in set(df["run_id"]) and meta["run_id"] not in set(df["run_id"])
    assert len(df) == 46 - 2 * 3  # the other 14 samples of the 16 stay (2 cases left out)


@pytest.mark.parametrize("bad", [
    {"scores": ["not", "a", "mapping"]}, {"scores": {"q": 3}}, {"replication": 10**20},
    {"replication": 0}, {"case_id": None}, {"tags": ["x"]},
    {"scores": {"q": {"value": 3, "kind": "numeric", "weight": "heavy"}}, "composite": None},
])
def test_a_malformed_record_is_skipped_whole_and_named(tmp_path: Path, bad: dict) -> None:
    root = _native(tmp_path)
    path = next(root.glob("*/*/cases/c1/record.json"))
    rec = json.loads(path.read_text())
    rec.update(bad)
    path.write_text(json.dumps(rec))
    df = load_runs(root)  # worker processes or not, the same
    notes = [i["detail"] for i in df.attrs["issues"] if i["kind"] == "unreadable_record"]
    assert len(notes) == 1 and "malformed record" in notes[0] and str(path.parent.parent.parent) in notes[0]
    assert len(df) == 46 - 3  # that sample's rows only; every column still lines up
    assert df.groupby(["run_id", "case_id", "replication"], observed=True).ngroups == 15


def test_unreadable_aeh_summary_leaves_that_run_out(tmp_path: Path) -> None:
    root = tmp_path / "aeh"
    shutil.copytree(AEH, root)
    summary = sorted(root.rglob("summary.yaml"))[0]
    summary.write_text("per_case: [unclosed\n")
    df = load_runs(root, judge_specs=AEH_SPECS)
    notes = [i["detail"] for i in df.attrs["issues"] if i["kind"] == "unreadable_run"]
    assert len(notes) == 1 and "summary.yaml" in notes[0]


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_judge_values_are_errors_with_a_reason(tmp_path: Path, bad: float) -> None:
    # JSON Infinity / NaN (Python's json writes and reads them) must never become a score:
    # normalised, +inf would clip to a composite of 1.0 and -inf to 0.0.
    data = {("m1",): {"c1": [{"q": bad}], "c2": [{"q": 4}]},
            ("m2",): {"c1": [{"q": 2}], "c2": [{"q": 3}]}}
    write_native(tmp_path / "runs", data, ["model"], ranges={"q": [1, 5]})
    for specs in (None, {"q": {"score_range": [1, 5]}}):
        df = load_runs(tmp_path / "runs", judge_specs=specs)
        rows = df[(df["case_id"] == "c1") & (df["model"] == "m1")]
        assert rows["errored"].all() and rows["value"].isna().all()
        (issue,) = [i for i in df.attrs["issues"] if i["kind"] == "non_finite_value"]
        assert "c1" in issue["detail"] and "judge q" in issue["detail"]
        ok = df[(df["case_id"] == "c2") & (df["judge"] == "composite") & (df["model"] == "m1")]
        assert ok["value"].tolist() == [0.75] and not ok["errored"].any()
