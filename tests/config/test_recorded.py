"""The run records its config beside the run directories; --analyze-only without --config
uses it (level order, reference, judge ranges, pass mark) and says so. Without it, the
level order fell back to the order found and verdicts flipped."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from tests.conftest import run_cli

# zeta (the first level, so the reference) answers right; alpha answers wrong
AGENT = "import sys\nprint('right' if sys.argv[1] == 'zeta' else 'wrong')\n"


def _setup(tmp: Path) -> Path:
    (tmp / "agent.py").write_text(AGENT)
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "right"}} for i in range(6)]))
    cfg = {"name": "rec", "matrix": {"factors": {"model": ["zeta", "alpha"]}},
           "runner": {"type": "cli", "command": f"{sys.executable} -S agent.py {{model}}"},
           "dataset": {"path": "cases.yaml"},
           "judges": [{"name": "quality", "check": "return 5 if outputs['output'] == "
                       "expected['answer'] else 2, ''", "score_range": [1, 5]}],
           "thresholds": {"pass_score": 0.6}}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


def _verdicts(out: Path) -> list[tuple[str, str, str]]:
    doc = json.loads((out / "comparisons.json").read_text())
    return [(c["reference"]["levels"]["model"], c["candidate"]["levels"]["model"], c["verdict"])
            for c in doc["comparisons"]]


def test_analyze_only_without_config_uses_the_recorded_config(tmp_path: Path,
                                                              monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = _setup(tmp_path)
    code, _, err = run_cli("--config", str(cfg), "--runs-dir", "runs", "--output", "a1")
    assert code == 0, err
    recorded = json.loads((tmp_path / "runs" / "rec" / "eval_config.json").read_text())
    assert recorded["source"] == str(cfg.resolve())
    assert list(recorded["config"]["matrix"]["factors"]["model"]) == ["zeta", "alpha"]
    with_config = _verdicts(tmp_path / "a1")
    assert with_config == [("zeta", "alpha", "regressed")]
    code, _, err = run_cli("--analyze-only", "runs/rec", "--output", "a2")
    assert code == 0, err
    assert "config: recorded at run time in runs/rec/eval_config.json" in err
    assert str(cfg.resolve()) in err  # which config it came from
    assert _verdicts(tmp_path / "a2") == with_config  # same reference, same verdicts
    a1 = json.loads((tmp_path / "a1" / "anova.json").read_text())
    a2 = json.loads((tmp_path / "a2" / "anova.json").read_text())
    assert a1["condition_summaries"] == a2["condition_summaries"]  # ranges, pass mark too
    # one run directory as the root finds it too (in its parent)
    one = next(p for p in (tmp_path / "runs" / "rec").iterdir() if p.is_dir())
    code, _, err = run_cli("--analyze-only", str(one), "--output", "a3")
    assert "config: recorded at run time" in err


def test_without_any_config_the_analysis_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = _setup(tmp_path)
    code, _, err = run_cli("--config", str(cfg), "--runs-dir", "runs", "--no-analysis")
    assert code == 0, err
    (tmp_path / "runs" / "rec" / "eval_config.json").unlink()
    code, _, err = run_cli("--analyze-only", "runs/rec", "--output", "a")
    assert "warning: no config" in err and "reference condition may differ" in err
    code, _, err = run_cli("--analyze-only", "runs/rec", "--output", "a", "--config", str(cfg))
    assert f"config: {cfg} (--config)" in err


def test_hostile_recorded_config_is_never_interpolated(tmp_path: Path, monkeypatch) -> None:
    """Attack (issue 28): a downloaded run directory's eval_config.json naming
    ${PGPASSWORD} in its name and paths got the variable expanded and printed."""
    from eval_harness.config.recorded import RECORDED, load_recorded

    monkeypatch.setenv("PGPASSWORD", "hunter2-db-password")
    doc = {"schema_version": 1, "source": "x.yaml", "config": {
        "name": "leak", "dataset": {"path": "${PGPASSWORD}/cases.jsonl"},
        "judges": [{"name": "j", "check": "return True, '${PGPASSWORD}'"}]}}
    (tmp_path / RECORDED).write_text(json.dumps(doc))
    loaded, _ = load_recorded(tmp_path / RECORDED)
    assert loaded is not None
    assert loaded.config.dataset is not None
    assert str(loaded.config.dataset.path).startswith("${PGPASSWORD}")
    assert "hunter2" not in json.dumps(loaded.config.model_dump(mode="json"))
    # in the name: `$` is not a name character, so the file is unusable (ignored, said)
    doc["config"]["name"] = "leak-${PGPASSWORD}"
    (tmp_path / RECORDED).write_text(json.dumps(doc))
    loaded, why = load_recorded(tmp_path / RECORDED)
    assert loaded is None and "hunter2" not in why


def test_a_deeply_nested_recording_is_unusable_not_a_crash(tmp_path: Path) -> None:
    from eval_harness.config.recorded import load_recorded, recorded_judge_digests

    path = tmp_path / "eval_config.json"
    path.write_text('{"config": ' + "[" * 100_000 + "]" * 100_000 + "}")
    loaded, why = load_recorded(path)
    assert loaded is None and "unusable" in why
    assert recorded_judge_digests(path) is None
