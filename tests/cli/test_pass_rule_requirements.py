"""Issue 37, item 1: a pass rule that cannot pass a wrong answer by accident.

A bc-shaped eval (a correctness check `close` plus an always-true `nonempty` judge) over a
tiny local calculator with a deliberate bug: by default every boolean judge is a
requirement, so the wrong answers are failures (on main the composite of a wrong answer
was 0.5 and passed), and the README's gate fails when the program is broken. The
weighted-average rule stays available when written (`matrix.analysis.pass_rule:
composite`); an agent-eval-harness config gets its rule (a false boolean makes the case 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from eval_harness.analysis.compare.verdicts import VerdictRule, sample_table
from eval_harness.config.loader import load_config
from eval_harness.errors import ConfigError
from tests.conftest import run_cli

# 12 expressions; the calculator's bug: with CALC_BROKEN=k it answers the first k of them
# wrong (off by one), and the `fast` mode always gets the divisions wrong
EXPRESSIONS = ["1+2", "7*6", "10-4", "9/3", "2*2*2", "100-1", "8/4", "3+4*2", "6*7-2",
               "15/5", "2+2", "50/10"]

AGENT = """\
import os, sys
expr, mode = sys.argv[1], sys.argv[2]
broken = int(os.environ.get("CALC_BROKEN", "0"))
value = eval(expr, {"__builtins__": {}})
index = int(sys.argv[3])
if index < broken and os.environ.get("CALC_SILENT"):
    sys.exit(0)  # no answer at all: every judge false, under any rule
if index < broken or (mode == "fast" and "/" in expr):
    value = value + 1
print(f"{value:g}")
"""


def _eval(tmp: Path, extra: str = "", broken: int = 0, name: str = "eval.yaml",
          silent: bool = False) -> Path:
    (tmp / "calc.py").write_text(AGENT)
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(
        json.dumps({"id": f"e{i:02d}", "input": {"expr": e, "index": str(i)},
                    "expected": {"result": eval(e)}}) + "\n"  # the fixed literals above
        for i, e in enumerate(EXPRESSIONS)))
    path = tmp / name
    path.write_text(f"""\
name: calc
matrix:
  factors:
    mode: [exact, fast]
  replications: 2
{extra}runner:
  type: cli
  command: python3 -S {tmp / "calc.py"} {{expr}} {{mode}} {{index}}
execution:
  env: {{CALC_BROKEN: "{broken}", CALC_SILENT: "{'1' if silent else ''}"}}
dataset:
  path: {cases}
judges:
  - name: close
    check: |
      try:
          got = float(str(outputs.get("output") or "").strip())
      except ValueError:
          return False, "not a number"
      return abs(got - float(expected["result"])) < 1e-9, f"got {{got}}"
  - name: nonempty
    check: |
      return bool(str(outputs.get("output") or "").strip()), "answered"
""")
    return path


def _run(config: Path, runs: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("--config", str(config), "--runs-dir", str(runs), "--output", str(out),
                   "--no-judge-check", "--concurrency", "4", *extra)


def _rates(out: Path) -> dict[str, float]:
    report = json.loads((out / "report.json").read_text())
    return {c["levels"]["mode"]: round(c["pass_rate"], 6) for c in report["conditions"]}


def test_wrong_answers_fail_by_default_and_every_report_states_the_rule(tmp_path: Path) -> None:
    config = _eval(tmp_path)
    code, stdout, err = _run(config, tmp_path / "runs", tmp_path / "out")
    assert code == 0, err
    out = tmp_path / "out"
    # fast gets the 4 divisions wrong: 8/12 pass; on main both conditions passed 100 %
    assert _rates(out) == {"exact": 1.0, "fast": round(8 / 12, 6)}
    rule = "requirements — a sample passes when every boolean judge is true and its " \
           "composite ≥ 0.5"
    assert json.loads((out / "report.json").read_text())["pass_rule"] == rule
    assert json.loads((out / "comparisons.json").read_text())["verdict_rule"]["rule"] == \
        "requirements"
    assert json.loads((out / "leaderboard.json").read_text())["pass_rule"] == rule
    assert f"Pass rule: {rule}" in (out / "report.md").read_text()
    assert f"pass rule: {rule}" in (out / "report.html").read_text()
    assert f"pass rule: {rule}" in " ".join(stdout.split())
    code, stdout, err = run_cli("--config", str(config), "--dry-run")
    assert code == 0, err
    assert f"pass rule: {rule}" in " ".join(stdout.split())
    code, stdout, err = run_cli("--config", str(config), "--dry-run", "--json")
    assert json.loads(stdout)["pass_rule"] == rule


def test_the_weighted_average_rule_when_written(tmp_path: Path) -> None:
    config = _eval(tmp_path, "  analysis:\n    pass_rule: composite\n")
    code, _, err = _run(config, tmp_path / "runs", tmp_path / "out")
    assert code == 0, err
    # a wrong answer: close 0, nonempty 1, composite 0.5 >= 0.5 -> passes, as written
    assert _rates(tmp_path / "out") == {"exact": 1.0, "fast": 1.0}
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["pass_rule"].startswith("composite — ")


def test_the_readme_gate_fails_when_the_program_is_broken(tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    code, _, err = _run(_eval(tmp_path), tmp_path / "r1", tmp_path / "a1",
                        "--export", str(base), "--compact")
    assert code == 0, err
    # unchanged program, run again: the gate passes
    code, _, err = _run(_eval(tmp_path), tmp_path / "r2", tmp_path / "a2",
                        "--baseline", str(base), "--fail-on-regression")
    assert code == 0, err
    # broken: 8 of 12 answers off by one. On main (composite >= 0.5) every wrong answer
    # still passed and the gate exited 0
    broken = _eval(tmp_path, broken=8, name="broken.yaml")
    code, _, err = _run(broken, tmp_path / "r3", tmp_path / "a3",
                        "--baseline", str(base), "--fail-on-regression")
    assert code == 1, err
    assert "significant overall drop in pass rate" in err
    assert "regression: verdicts by the pass rule: requirements — a sample passes when " \
           "every boolean judge is true" in " ".join(err.split())


def test_a_bad_pass_rule_names_its_key_path(tmp_path: Path) -> None:
    config = _eval(tmp_path, "  analysis:\n    pass_rule: average\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    text = str(info.value)
    assert "matrix.analysis.pass_rule" in text
    assert "requirements" in text and "composite" in text


def _frame(rows: list[tuple[str, str, object, float | None]]) -> pd.DataFrame:
    """One attempt: (judge, kind, value, normalised)."""
    base = {"condition_id": "c", "run_id": "r", "replication": 1, "case_id": "k",
            "errored": False, "case_status": "ok", "case_hash": "h"}
    return pd.DataFrame([{**base, "judge": j, "kind": k, "value": v, "normalized": n}
                         for j, k, v, n in rows])


def test_each_rule_on_one_wrong_answer() -> None:
    # wrong answer (close false), an easy boolean true, an LLM judge 5/5: composite 2/3
    wrong = _frame([("close", "boolean", 0.0, 0.0), ("nonempty", "boolean", 1.0, 1.0),
                    ("quality", "numeric", 5.0, 1.0), ("composite", "composite", 2 / 3, 2 / 3)])
    right = _frame([("close", "boolean", 1.0, 1.0), ("nonempty", "boolean", 1.0, 1.0),
                    ("quality", "numeric", 2.0, 0.25), ("composite", "composite", 0.75, 0.75)])
    passed = {rule: [sample_table(f, VerdictRule(rule=rule))["passed"][0] for f in (wrong, right)]
              for rule in ("requirements", "composite", "aeh")}
    assert passed["requirements"] == [0.0, 1.0]  # the default: the false check fails it
    assert passed["composite"] == [1.0, 1.0]  # the weighted average alone
    # agent-eval-harness: booleans gate, then the mean of the numeric judges (0.25 < 0.5)
    assert passed["aeh"] == [0.0, 0.0]
    assert VerdictRule().rule == "requirements"
    # an errored requirement is no verdict (never a pass or a fail)
    errored = _frame([("close", "boolean", None, None), ("nonempty", "boolean", 1.0, 1.0),
                      ("composite", "composite", 1.0, 1.0)])
    errored.loc[0, "errored"] = True
    scored = _frame([("close", "boolean", 1.0, 1.0), ("composite", "composite", 1.0, 1.0)])
    scored["case_id"] = "k2"  # close scored elsewhere: it is a live requirement
    table = sample_table(pd.concat([errored, scored], ignore_index=True), VerdictRule())
    assert table["errored"].tolist() == [True, False]
    # a record written before pass rules existed was the composite rule
    assert VerdictRule.from_record({"pass_mark": 0.5}).rule == "composite"
    assert VerdictRule.from_record({}).rule == "requirements"


def test_an_agent_eval_harness_config_gets_its_rule(tmp_path: Path) -> None:
    from eval_harness.app.options import verdict_rule_of

    aeh = tmp_path / "eval.yaml"
    aeh.write_text("""\
name: calc
execution:
  mode: case
runner:
  type: cli
  command: echo 1
dataset:
  path: cases.jsonl
judges:
  - name: close
    check: 'return True, ""'
  - name: nonempty
    check: 'return True, ""'
thresholds:
  close:
    min_pass_rate: 0.9
""")
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": {}}\n')
    loaded = load_config(aeh)
    assert loaded.dialects == ("agent-eval-harness",)
    assert verdict_rule_of(loaded).rule == "aeh"
    assert "agent-eval-harness" in verdict_rule_of(loaded).text()
    (tmp_path / "native").mkdir()
    native = load_config(_eval(tmp_path / "native"))
    assert native.dialects == ()
    assert verdict_rule_of(native).rule == "requirements"


def test_a_boolean_judge_that_errored_everywhere_is_no_requirement() -> None:
    # --allow-errored-judges drops it from the composite; it must not then void every sample
    rows = []
    for case, ok in (("k1", 1.0), ("k2", 0.0)):
        base = {"condition_id": "c", "run_id": "r", "replication": 1, "case_id": case,
                "errored": False, "case_status": "ok", "case_hash": "h"}
        rows += [{**base, "judge": "dead", "kind": "boolean", "value": None,
                  "normalized": None, "errored": True},
                 {**base, "judge": "close", "kind": "boolean", "value": ok, "normalized": ok},
                 {**base, "judge": "composite", "kind": "composite", "value": ok,
                  "normalized": ok}]
    samples = sample_table(pd.DataFrame(rows), VerdictRule())
    assert samples["passed"].tolist() == [1.0, 0.0]
    assert not samples["errored"].any()
