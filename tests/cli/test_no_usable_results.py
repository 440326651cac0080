"""Nothing usable is never exit 0: every cell errored, or a judge errored on every sample,
is named with its reason; the reports say "no scored samples" instead of empty tables."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tests.conftest import run_cli

AGENT = "import sys\nprint('Answer: ' + sys.argv[1])\n"


def write(tmp: Path, *, command: str, judges: list[dict[str, Any]]) -> Path:
    (tmp / "agent.py").write_text(AGENT)
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "Answer: a"}}]))
    cfg = {"name": "t", "matrix": {"factors": {"model": ["a", "b"]}},
           "runner": {"type": "cli", "command": command}, "dataset": {"path": "cases.yaml"},
           "execution": {"retries": 0}, "judges": judges}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


def args(tmp: Path, *extra: str) -> list[str]:
    return ["--config", str(tmp / "eval.yaml"), "--runs-dir", str(tmp / "runs"), "--output",
            str(tmp / "out"), *extra]


EXACT = [{"name": "ok", "exact_match": True}]


def test_every_cell_errored_exits_4_with_the_reason_and_an_honest_report(tmp_path: Path) -> None:
    write(tmp_path, command=f"{sys.executable} {tmp_path}/agnet.py {{model}}", judges=EXACT)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "comparisons.json").write_text("{}")  # from an earlier run
    code, _, err = run_cli(*args(tmp_path))
    assert code == 4, err
    assert "can't open file" in err and "agnet.py" in err and "×2" in err
    assert "no scored samples" in err
    report = (tmp_path / "out" / "report.md").read_text()
    assert "No scored samples" in report and "agnet.py" in report
    assert "leader" not in report and "0 cases" not in report
    anova = json.loads((tmp_path / "out" / "anova.json").read_text())
    assert anova["status"] == "no_scored_samples" and anova["errored_reasons"][0]["count"] == 2
    schema = json.loads((Path(__file__).resolve().parents[2] / "eval_harness" / "analysis" /
                         "schema" / "anova.schema.json").read_text())
    jsonschema.validate(anova, schema)  # still a valid anova.json for scripts
    assert not (tmp_path / "out" / "comparisons.json").exists()  # no stale result left
    assert "No scored samples" in (tmp_path / "out" / "report.html").read_text()


def test_every_cell_errored_without_analysis_is_still_exit_4(tmp_path: Path) -> None:
    write(tmp_path, command=f"{sys.executable} {tmp_path}/agnet.py {{model}}", judges=EXACT)
    code, _, err = run_cli(*args(tmp_path, "--no-analysis"))
    assert code == 4, err
    assert "agnet.py" in err and "×2" in err


def test_a_judge_that_errored_on_every_sample_fails_the_run_unless_allowed(tmp_path: Path) -> None:
    judges = [{"name": "keyerror", "check": "return outputs['nope'], ''\n"},
              {"name": "ghost", "contains": "{{ expected.nope }}"}, *EXACT]
    write(tmp_path, command=f"{sys.executable} {tmp_path}/agent.py {{model}}", judges=judges)
    # run-time failure of the judges (dry-run would stop them: see test_dry_run_checks)
    code, _, err = run_cli(*args(tmp_path))
    assert code == 4, err
    assert "judge `keyerror` errored on every sample (2): KeyError: 'nope'" in err
    assert "judge `ghost` errored on every sample (2)" in err and "expected.nope" in err
    assert (tmp_path / "out" / "report.md").exists()  # the working judge is still reported
    code, _, err = run_cli(*args(tmp_path, "--allow-errored-judges"))
    assert code == 0, err
    assert "judge `keyerror` errored on every sample" in err  # still said, just not fatal
