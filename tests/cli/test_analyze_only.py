"""--analyze-only through the CLI: no config needed, option precedence, outputs written."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

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


def _incomplete_runs(tmp_path: Path) -> Path:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
    from rundir_writer import write_native

    data = {(m, e): {f"c{i}": [{"q": float((7 * i + 3 * len(m + e) + i * (m == "m2")) % 11)}]
                     for i in range(8) if not (i == 0 and (m, e) == ("m2", "high"))}
            for m in ("m1", "m2") for e in ("low", "high")}
    write_native(tmp_path / "runs", data, ["model", "effort"], ranges={"q": [0, 10]})
    return tmp_path / "runs"


def test_default_method_keeps_incomplete_cases_and_says_so(tmp_path: Path) -> None:
    _incomplete_runs(tmp_path)
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


def test_mixed_ddf_kenward_roger_by_default_satterthwaite_by_flag(tmp_path: Path) -> None:
    runs = _incomplete_runs(tmp_path)
    out = {}
    for ddf in (None, "satterthwaite"):
        flags = ["--ddf", ddf] if ddf else []
        code, _, err = run_cli("--analyze-only", str(runs), "--output", str(tmp_path / str(ddf)),
                               *flags)
        assert code == 0, err
        out[ddf] = json.loads((tmp_path / str(ddf) / "anova.json").read_text())
    kr, sw = out[None], out["satterthwaite"]
    assert kr["method"]["name"] == sw["method"]["name"] == "mixed"
    assert "Kenward–Roger df" in kr["method"]["label"] and kr["method"]["fit"].endswith("Kenward–Roger df")
    assert "Satterthwaite df" in sw["method"]["label"] and sw["method"]["fit"].endswith("Satterthwaite df")
    assert kr["terms"]["model"]["df_den"] != sw["terms"]["model"]["df_den"]
    from eval_harness.cli.args import build_parser

    stderr = io.StringIO()
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(stderr):
        build_parser().parse_args(["--analyze-only", str(runs), "--ddf", "wald"])
    err = stderr.getvalue()  # argparse's own exit 2, naming the choices
    assert exc.value.code == 2 and "--ddf" in err and "'kenward-roger', 'satterthwaite'" in err
