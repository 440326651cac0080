"""agent-eval-harness run directories browsed: ``runs``, ``show`` and the report's
drill-down show its judges' values and rationales and per-case latency / cost / tokens."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.aeh.test_aeh_shapes import _make
from tests.conftest import run_cli


def _runs(tmp_path: Path) -> Path:
    _make(tmp_path / "runs", "replications")
    eval_dir = tmp_path / "runs" / "my-eval"
    for run in eval_dir.iterdir():
        case = run / "cases" / "case-2"
        case.mkdir(parents=True)
        (case / "stdout.log").write_text(f"answer from {run.name}\n")
        (case / "input.yaml").write_text("prompt: the question\n")
    return eval_dir


def test_runs_lists_them_with_replications(tmp_path: Path) -> None:
    eval_dir = _runs(tmp_path)
    code, out, err = run_cli("runs", str(eval_dir), "--json")
    assert code == 0, err
    runs = json.loads(out)
    assert len(runs) == 4
    assert sorted((r["levels"]["model"], r["replication"]) for r in runs) == [
        ("a", 1), ("a", 2), ("b", 1), ("b", 2)]


def test_show_gives_rationales_and_case_facts(tmp_path: Path) -> None:
    eval_dir = _runs(tmp_path)
    code, out, err = run_cli("show", str(eval_dir), "--case", "case-2", "--json")
    assert code == 0, err
    samples = json.loads(out)
    [sample] = [s for s in samples if s["run"]["run_id"].endswith("model-a-r1")]
    assert sample["input"] == {"prompt": "the question"}
    assert sample["output"].startswith("answer from 2026-07-30-model-a-r1")
    assert (sample["latency_s"], sample["cost_usd"]) == (12.0, 0.03)
    judges = {j["name"]: j for j in sample["judges"]}
    assert judges["q"]["rationale"] == f"because {judges['q']['value']}"
    assert judges["ok"]["rationale"].startswith("because ")


def test_report_drilldown_shows_them(tmp_path: Path) -> None:
    eval_dir = _runs(tmp_path)
    out = tmp_path / "out"
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("name: my-eval\ntitle: Weekly agent check\n")
    code, _, err = run_cli("--analyze-only", str(eval_dir), "--output", str(out),
                           "--config", str(cfg))
    assert code == 0, err
    html = (out / "report.html").read_text()
    assert "<h1>Weekly agent check</h1>" in html  # its `title`
    assert (out / "report.md").read_text().startswith("## Weekly agent check")
    assert "answer from 2026-07-30-model-a-r1" in html
    assert "because " in html and "latency 12 s · cost $0.03 · 122 tokens" in html


def _count_summary_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts, by run directory, the summary.yaml parses of this module's readers."""
    from eval_harness.aeh import cases as aeh_runs

    reads: Counter[str] = Counter()
    real = aeh_runs.read_summary

    def counted(path: str) -> dict[str, Any]:
        reads[Path(path).name] += 1
        return real(path)

    monkeypatch.setattr(aeh_runs, "read_summary", counted)
    return reads


def test_report_drilldown_parses_each_runs_summary_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eval_dir = _runs(tmp_path)
    reads = _count_summary_reads(monkeypatch)
    code, _, err = run_cli("--analyze-only", str(eval_dir), "--output", str(tmp_path / "out"))
    assert code == 0, err
    assert "answer from 2026-07-30-model-a-r1" in (tmp_path / "out" / "report.html").read_text()
    # several cases shown per run, one parse per run (it was one per case shown)
    assert len(reads) >= 3 and set(reads.values()) == {1}, reads


def test_runs_listing_parses_each_summary_a_fixed_number_of_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eval_dir = _runs(tmp_path)
    reads = _count_summary_reads(monkeypatch)
    code, out, err = run_cli("runs", str(eval_dir), "--json")
    assert code == 0, err
    assert all(sum(r["counts"].values()) >= 2 for r in json.loads(out))  # several cases
    # the run's facts, then its cases in one pass (it was one parse per case)
    assert dict(reads) == {run.name: 2 for run in eval_dir.iterdir() if run.is_dir()}
