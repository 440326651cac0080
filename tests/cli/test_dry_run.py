"""--dry-run: grid, totals, estimates, warnings, --json."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import run_cli

CONFIG = """\
name: demo
matrix:
  factors:
    model: [m1, m2]
    effort: [low, medium, high]
    context: [none, docs]
    unused: [a, b]
  replications: 3
execution:
  max_budget_usd: 0.5
runner:
  type: cli
  command: "python3 agent.py --model {model} --effort {effort} --context {context} --q {question}"
models:
  judge: openai:m2
dataset:
  path: cases.yaml
judges:
  - name: ok
    check: |
      return outputs["output"] == expected, "eq"
  - name: llm
    prompt: "Rate {{ outputs.output }} for {{ input.question }}"
    score_range: [1, 5]
    samples: 2
"""


def _setup(tmp_path: Path, text: str = CONFIG, n_cases: int = 40) -> Path:
    cases = [{"id": f"c{i:02d}", "input": {"question": f"q{i}"}, "expected": str(i)}
             for i in range(n_cases)]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    path = tmp_path / "eval.yaml"
    path.write_text(text)
    return path


def test_dry_run_json_counts(tmp_path: Path) -> None:
    path = _setup(tmp_path, CONFIG.replace("    unused: [a, b]\n", ""))
    code, out, err = run_cli("--config", str(path), "--dry-run", "--json", "--runs-dir",
                             str(tmp_path / "runs"))
    assert code == 0, err
    data = json.loads(out)
    assert data["n_conditions"] == 12
    assert data["n_cases"] == 40
    assert data["replications"] == 3
    assert data["total_runs"] == 1440
    assert len(data["conditions"]) == 12
    assert {"condition_id", "levels"} <= set(data["conditions"][0])
    assert data["judge_calls"] == 1440 * 2
    assert data["estimate"]["cost_kind"] == "upper-bound"
    assert data["estimate"]["upper_bound_usd"] == 720.0


def test_dry_run_counts_pairwise_calls_by_pairs_judged(tmp_path: Path) -> None:
    """Every pair: C(12, 2) = 66 pairs; with a reference: 11 pairs. Each pair is judged
    in both orders, per case and replication."""
    base = CONFIG.replace("    unused: [a, b]\n", "").replace("    samples: 2\n", "    samples: 2\n"
        "  - name: pref\n    pairwise: PAIRWISE\n")
    for pairwise, pairs in (("true", 66), ('{reference: "model=m1,effort=low,context=none"}', 11)):
        path = _setup(tmp_path, base.replace("PAIRWISE", pairwise), n_cases=10)
        code, out, err = run_cli("--config", str(path), "--dry-run", "--json", "--runs-dir",
                                 str(tmp_path / "runs"))
        assert code == 0, err
        data = json.loads(out)
        per_run = 360 * 2  # the numeric judge, 2 samples, 12 x 10 x 3 runs
        assert data["judge_calls"] == per_run + 2 * pairs * 10 * 3, pairwise


def test_dry_run_warnings_and_filters(tmp_path: Path) -> None:
    path = _setup(tmp_path)
    code, out, _ = run_cli("--config", str(path), "--dry-run", "--json", "--limit", "5",
                           "--condition", "model=m1,effort=low", "--avg-cost-per-run", "0.01",
                           "--runs-dir", str(tmp_path / "runs"))
    assert code == 0
    data = json.loads(out)
    assert data["n_cases"] == 5
    assert data["n_conditions"] == 4  # context x unused
    assert data["estimate"]["cost_usd"] == 4 * 5 * 3 * 0.01
    text = " ".join(data["warnings"])
    assert "`unused` is consumed by nothing" in text
    assert "`m2` is also a model under test" in text


def test_dry_run_estimate_from_earlier_runs(tmp_path: Path) -> None:
    path = _setup(tmp_path)
    rec_dir = tmp_path / "runs" / "demo" / "r1" / "cases" / "c00"
    rec_dir.mkdir(parents=True)
    (rec_dir / "record.json").write_text(json.dumps({"cost_usd": 0.02, "latency_s": 2.0}))
    _code, out, _ = run_cli("--config", str(path), "--dry-run", "--json", "--runs-dir",
                           str(tmp_path / "runs"))
    est = json.loads(out)["estimate"]
    assert est["cost_kind"] == "point"
    assert abs(est["cost_usd"] - 0.02 * 24 * 40 * 3) < 1e-9
    assert est["time_s"] is not None


def test_dry_run_console(tmp_path: Path) -> None:
    path = _setup(tmp_path)
    code, out, _ = run_cli("--config", str(path), "--dry-run", "--runs-dir", str(tmp_path / "r"))
    assert code == 0
    assert "24 conditions × 40 cases × 3 replications = 2,880 runs" in out
    assert "valid" in out


def test_missing_config_flag_is_usage_error() -> None:
    code, _, err = run_cli("--dry-run")
    assert code == 2 and "--config" in err


def test_dry_run_power_from_config_prior(tmp_path: Path) -> None:
    text = CONFIG.replace("  replications: 3\n", "  replications: 3\n  analysis:\n    power: "
                          "{case_sd: 0.2, noise_sd: 0.3, target_effect: 0.1}\n")
    path = _setup(tmp_path, text)
    code, out, err = run_cli("--config", str(path), "--dry-run", "--json", "--runs-dir",
                             str(tmp_path / "runs"))
    assert code == 0, err
    power = json.loads(out)["power"]
    # MDE = (z.975 + z.8) * sqrt((0.04 + 2*0.09/3)/40) = 2.8016 * sqrt(0.1/40)
    assert abs(power["mde"] - 2.801585 * (0.1 / 40) ** 0.5) < 1e-5
    assert power["cases_needed"] > 40
    assert "minimum detectable" in power["text"]


def test_internal_error_is_one_line_without_debug(tmp_path: Path, monkeypatch) -> None:
    import eval_harness.cli.dry_run as dry

    def boom(*_a, **_k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(dry, "prepare", boom)
    path = _setup(tmp_path)
    code, _, err = run_cli("--config", str(path), "--dry-run")
    assert code == 70  # distinct from 1 (a gate failed)
    assert err.strip().splitlines() == [
        "internal error: RuntimeError: kaboom (rerun with --debug for the traceback; "
        "finished work is kept)"]
