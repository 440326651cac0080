"""--analyze-only through the CLI: no config needed, option precedence, outputs written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES, run_cli

AEH = FIXTURES / "aeh_runs"


def test_analyze_only_agent_eval_harness_runs_without_config(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_cli("--analyze-only", str(AEH), "--output", str(out), "--json",
                                "--correction", "fdr_bh")
    assert code == 0, err
    anova = json.loads(stdout)
    assert anova == json.loads((out / "anova.json").read_text())
    assert anova["correction"] == "bh"  # canonical name
    # without a config the runs are scored by agent-eval-harness's rule (gate, 1-5 scale)
    assert set(anova["terms"]) == {"context"}  # the single-level model is dropped
    assert "screening each judge" not in err
    for name in ("comparisons.json", "report.md", "report.json", "report.html"):
        assert (out / name).is_file()


def test_flag_beats_config_beats_default(tmp_path: Path) -> None:
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("name: aeh\nmatrix:\n  factors:\n    model: [claude-sonnet-4-6]\n    context: [none, cognee]\n"
                   "  analysis:\n    correction: none\n    method: lmm\n"
                   "judges:\n  - name: tests_pass\n    check: 'return True, \"\"'\n    gate: true\n"
                   "    weight: 0\n  - name: solution_quality\n    check: 'return 1, \"\"'\n"
                   "    score_range: [1, 5]\n")
    code, stdout, err = run_cli("--analyze-only", str(AEH), "--config", str(cfg), "--output",
                                str(tmp_path / "a"), "--json")
    assert code == 0, err
    anova = json.loads(stdout)
    assert anova["correction"] == "none" and anova["method"]["name"] == "lmm"
    assert anova["design"]["factors"]["context"] == ["none", "cognee"]  # config's order
    code, stdout, _ = run_cli("--analyze-only", str(AEH), "--config", str(cfg), "--output",
                              str(tmp_path / "b"), "--json", "--correction", "holm",
                              "--method", "rm")
    anova = json.loads(stdout)
    assert anova["correction"] == "holm" and anova["method"]["name"] == "rm"


def test_analyze_only_missing_directory_is_usage_error(tmp_path: Path) -> None:
    code, _, err = run_cli("--analyze-only", str(tmp_path / "nope"))
    assert code == 2 and "no such directory" in err


def test_keep_incomplete_needs_lmm(tmp_path: Path) -> None:
    code, _, err = run_cli("--analyze-only", str(AEH), "--keep-incomplete", "--output",
                           str(tmp_path / "o"))
    assert code == 2 and "--method lmm" in err


def test_every_sample_errored_is_said_plainly(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text("- {id: c1, input: {q: 1}}\n- {id: c2, input: {q: 2}}\n")
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("name: allerr\nmatrix:\n  factors:\n    model: [m1, m2]\n"
                   "runner:\n  type: cli\n  command: /bin/false\n"
                   "dataset:\n  path: cases.yaml\n"
                   "judges:\n  - name: j\n    check: 'return True, \"\"'\n")
    code, _, err = run_cli("--config", str(cfg), "--runs-dir", str(tmp_path / "runs"),
                           "--output", str(tmp_path / "out"))
    assert code == 4, err  # nothing usable is never exit 0
    assert "every sample errored (4 of 4): nothing was scored" in err
    assert "pass --config" not in err  # the config was given: do not blame judge ranges
    anova = json.loads((tmp_path / "out" / "anova.json").read_text())
    assert anova["errored_samples"]["count"] == 4 and anova["terms"] == {}
    assert anova["status"] == "no_scored_samples"


def test_default_method_keeps_incomplete_cases_and_says_so(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
    from rundir_writer import write_native

    data = {(m, e): {f"c{i}": [{"q": float((7 * i + 3 * len(m + e) + i * (m == "m2")) % 11)}]
                     for i in range(8) if not (i == 0 and (m, e) == ("m2", "high"))}
            for m in ("m1", "m2") for e in ("low", "high")}
    write_native(tmp_path / "runs", data, ["model", "effort"], ranges={"q": [0, 10]})
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                           str(tmp_path / "o"))
    assert code == 0, err
    assert "method auto → mixed: 1 of 8 case(s) miss cells" in err
    anova = json.loads((tmp_path / "o" / "anova.json").read_text())
    assert anova["method"]["name"] == "mixed" and anova["method"]["requested"] == "auto"
    assert anova["excluded_cases"] == [] and anova["design"]["n_cases"] == 8
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                           str(tmp_path / "r"), "--method", "rm")
    anova = json.loads((tmp_path / "r" / "anova.json").read_text())
    assert code == 0 and anova["method"]["name"] == "rm" and len(anova["excluded_cases"]) == 1
