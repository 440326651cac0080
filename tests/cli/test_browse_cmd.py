"""``orchestrate runs`` and ``orchestrate show`` over the starter eval's runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_cli


def test_runs_lists_conditions_replications_and_counts(starter_runs: Path) -> None:
    code, out, err = run_cli("runs", str(starter_runs))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == ("4 run(s), 4 condition(s), replications 1; cases: 40 ok, 0 errored, "
                        "0 incomplete")
    body = lines[2:]
    assert len(body) == 4
    for line in body:
        assert "complete" in line and "model=starter-" in line and "style=" in line
    code, out, _ = run_cli("runs", str(starter_runs), "--json", "--condition", "style=terse")
    rows = json.loads(out)
    assert len(rows) == 2 and {r["levels"]["style"] for r in rows} == {"terse"}
    assert all(r["counts"] == {"ok": 10} and r["replication"] == 1 for r in rows)


def test_show_one_case_across_conditions(starter_runs: Path) -> None:
    code, out, err = run_cli("show", str(starter_runs), "--case", "mul-02")
    assert code == 0, err
    assert out.startswith("case mul-02: 4 sample(s) in 4 condition(s)\n")
    assert out.count("── model=starter-") == 4
    assert out.count('input: {"question": "What is 37 * 43?"') == 4
    assert "answer: 37 * 43 = " in out  # a stepwise answer
    assert "expected 1591" in out  # the check judge's rationale
    assert "shows_work" in out and "missing: ['=']" in out  # the built-in's rationale
    assert "latency " in out and "composite " in out
    code, out, _ = run_cli("show", str(starter_runs), "--case", "mul-02", "--json",
                           "--condition", "model=starter-large,style=stepwise")
    views = json.loads(out)
    assert len(views) == 1
    view = views[0]
    assert view["status"] == "ok" and view["output"].startswith("37 * 43 = ")
    assert {j["name"] for j in view["judges"]} == {"correct", "shows_work"}
    record = json.loads((Path(view["run"]["path"]) / "cases" / "mul-02" / "record.json")
                        .read_text())
    assert view["latency_s"] == record["latency_s"]
    assert view["composite"] == record["composite"]


def test_show_errored_sample_gives_the_reason(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: 1}}\n")
    (tmp_path / "eval.yaml").write_text(
        "name: broken\nmatrix:\n  factors:\n    model: [m1, m2]\n"
        "runner:\n  type: cli\n  command: python3 -c \"import sys; sys.exit('boom {model}')\"\n"
        "dataset:\n  path: cases.yaml\n"
        "judges:\n  - name: j\n    check: 'return True, \"\"'\n")
    code, _, err = run_cli("--config", str(tmp_path / "eval.yaml"), "--runs-dir",
                           str(tmp_path / "runs"), "--no-analysis")
    assert code == 4, err  # every cell errored: never exit 0 (issue 12)
    code, out, err = run_cli("show", str(tmp_path / "runs" / "broken"))
    assert code == 0, err
    assert out.count(" errored ") == 2
    assert out.count("   error: ") == 2 and "exit" in out.lower()
    code, out, _ = run_cli("runs", str(tmp_path / "runs" / "broken"))
    assert "0 ok, 2 errored" in out.splitlines()[0]


def test_show_incomplete_case_and_bad_input(starter_runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runs"
    shutil.copytree(starter_runs, copy)
    victim = next(copy.glob("*/cases/add-01/record.json"))
    victim.unlink()  # as if killed before the case finished
    code, out, _ = run_cli("show", str(copy), "--case", "add-01")
    assert code == 0
    assert "incomplete" in out and "no record.json" in out
    code, out, _ = run_cli("runs", str(copy))
    assert "39 ok, 0 errored, 1 incomplete" in out
    code, _, err = run_cli("show", str(copy), "--case", "nope")
    assert code == 2 and "cases are: add-01" in err
    code, _, err = run_cli("show", str(copy), "--condition", "temperature=1")
    assert code == 2 and "factors are model, style" in err
    code, _, err = run_cli("runs", str(tmp_path / "missing"))
    assert code == 2 and "no such directory" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli("runs", str(tmp_path / "empty"))
    assert code == 2 and "no run directories" in err
