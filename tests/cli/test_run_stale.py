"""Attacks on resume (issue 28): an edited / added judge and an edited case must not leave
stale results that the reports show as current."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import run_cli
from tests.runner.runner_helpers import agent_command, records, write_eval

JUDGE = {"name": "match", "check": "return outputs['output'] == expected['answer'], 'v1'"}


def _setup(tmp: Path) -> tuple[Path, Path, dict]:
    cfg = write_eval(tmp, factors={"mode": ["correct", "wrong"]}, n_cases=3,
                     runner={"type": "cli", "command": agent_command(), "output_format": "json"})
    data = yaml.safe_load(cfg.read_text())
    data["judges"] = [dict(JUDGE)]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    return cfg, tmp / "runs", data


def _run(cfg: Path, runs: Path, *extra: str) -> tuple[int, str]:
    code, _, err = run_cli("--config", str(cfg), "--runs-dir", str(runs), "--no-analysis",
                           "--no-judge-check", *extra)
    return code, err


def test_edited_and_added_judges_rescore_without_agent_calls(tmp_path: Path) -> None:
    cfg, runs, data = _setup(tmp_path)
    assert _run(cfg, runs)[0] == 0
    finished = {r["case_id"] + r["condition_id"]: r["finished_at"] for r in records(runs / "t")}
    data["judges"] = [{**JUDGE, "check": "return 0.5, 'v2'", "score_range": [0, 1]},
                      {"name": "extra", "check": "return True, 'new'"}]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    code, err = _run(cfg, runs)
    assert code == 0, err
    assert "0 of 6 cells run" in err  # no agent call
    assert "judges changed since 6 complete record(s)" in err
    assert "edited: match" in err and "added: extra" in err
    recs = records(runs / "t")
    assert all(r["scores"]["match"]["rationale"] == "v2" for r in recs)
    assert all(r["scores"]["extra"]["value"] is True for r in recs)
    assert {r["case_id"] + r["condition_id"]: r["finished_at"] for r in recs} == finished
    # a third run with the same judges rescores nothing
    code, err = _run(cfg, runs)
    assert code == 0 and "judges changed" not in err


def test_edited_case_reruns_its_cells_and_is_named(tmp_path: Path) -> None:
    cfg, runs, _ = _setup(tmp_path)
    assert _run(cfg, runs)[0] == 0
    cases = yaml.safe_load((tmp_path / "cases.yaml").read_text())
    cases[1]["input"]["question"] = "an edited question"
    cases[1]["expected"]["answer"] = "a new answer"
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    code, err = _run(cfg, runs)
    assert code == 0, err
    assert "2 of 6 cells run" in err and "2 stale rerun" in err
    assert "1 case(s) changed (input or expected) since their last run" in err and "c01" in err
    recs = [r for r in records(runs / "t") if r["case_id"] == "c01"]
    assert all(r["scores"]["match"]["value"] is False for r in recs)  # scored on the new answer


def test_analyze_only_warns_when_records_judges_differ_from_config(tmp_path: Path) -> None:
    cfg, runs, data = _setup(tmp_path)
    assert _run(cfg, runs)[0] == 0
    data["judges"] = [{**JUDGE, "check": "return 0.5, 'v2'", "score_range": [0, 1]},
                      {"name": "extra", "check": "return True, 'new'"}]
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump(data, sort_keys=False))
    code, _, err = run_cli("--analyze-only", str(runs / "t"), "--config", str(new), "--output",
                           str(tmp_path / "out"))
    assert code in (0, 1), err
    assert "scored by other judges than the config's" in err
    assert "edited: match" in err and "added: extra" in err and "--rescore" in err
    json.loads((tmp_path / "out" / "anova.json").read_text())


def test_no_false_edit_warning_for_a_judge_using_env_vars(tmp_path: Path) -> None:
    # issue 28 follow-up: the recorded config keeps `${VAR}` as written (never interpolated)
    # while the run digested the interpolated judge: main warned "edited: match" although
    # nothing changed
    cfg, runs, data = _setup(tmp_path)
    data["judges"] = [{**JUDGE, "check": "return outputs['output'] == expected['answer'], "
                                         "'${JUDGE_NOTE:-v1}'"}]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False))
    assert _run(cfg, runs)[0] == 0
    code, _, err = run_cli("--analyze-only", str(runs / "t"), "--output", str(tmp_path / "a"))
    assert code in (0, 1), err
    assert "recorded at run time" in err and "scored by other judges" not in err
    # a real edit is still seen against the recorded config's judges
    doc = json.loads((runs / "t" / "eval_config.json").read_text())
    doc["judge_digests"]["match"] = "0" * 16
    (runs / "t" / "eval_config.json").write_text(json.dumps(doc))
    code, _, err = run_cli("--analyze-only", str(runs / "t"), "--output", str(tmp_path / "b"))
    assert "edited: match" in err
    del doc["judge_digests"]  # recorded before the digests were: `${VAR}` judges not compared
    (runs / "t" / "eval_config.json").write_text(json.dumps(doc))
    code, _, err = run_cli("--analyze-only", str(runs / "t"), "--output", str(tmp_path / "c"))
    assert code in (0, 1), err
    assert "recorded at run time" in err and "scored by other judges" not in err
