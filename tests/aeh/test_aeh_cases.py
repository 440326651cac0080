"""agent-eval-harness run directories browsed: ``runs``, ``show`` and the report's
drill-down show its judges' values and rationales and per-case latency / cost / tokens."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_report_drilldown_parses_no_summary_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eval_dir = _runs(tmp_path)
    reads = _count_summary_reads(monkeypatch)
    code, _, err = run_cli("--analyze-only", str(eval_dir), "--output", str(tmp_path / "out"))
    assert code == 0, err
    html = (tmp_path / "out" / "report.html").read_text()
    assert "answer from 2026-07-30-model-a-r1" in html and "because " in html
    # the loader parsed every summary; the drill-down parses only the shown cases' own
    # lines (it was one whole parse per run, before that one per case shown)
    assert dict(reads) == {}, reads


def _summary_dirs() -> list[Path]:
    root = Path(__file__).resolve().parents[1]
    return sorted({p.parent for p in root.rglob("summary.yaml")})


@pytest.mark.parametrize("run_dir", _summary_dirs(), ids=lambda p: p.name)
def test_sliced_entries_equal_the_whole_parse(run_dir: Path) -> None:
    from eval_harness.aeh.cases import _entries_of
    from eval_harness.aeh.scoring import read_summary
    from eval_harness.analysis.loading.runfiles import UnreadableRun

    try:
        per_case = read_summary(str(run_dir)).get("per_case") or {}
    except UnreadableRun:
        return  # an unreadable summary is never loaded, so never drilled into
    whole = {str(k): v for k, v in reversed(list(per_case.items()))}
    ids = list(whole)[:50]
    got = _entries_of(run_dir, ids)
    if got is not None:
        assert [repr(got[i]) for i in ids] == [repr(whole[i]) for i in ids]


_ENTRY = "  {}:\n    j:\n      value: {}\n      rationale: {}\n"


_WRITTEN = "per_case:\n" + _ENTRY.format("c1", 1, "ok") + _ENTRY.format("c2", 2, "fine")


@pytest.mark.parametrize("text", [
    _WRITTEN,  # yaml.dump's layout: sliced; the rest are refused (a whole parse)
    "run_id: r\nper_case:\n" + _ENTRY.format("c1", 1, "'a: b\n  c2:\n  x'")
    + _ENTRY.format("c2", 2, "fine"),  # a key-like line inside a quoted text
    "per_case:\n" + _ENTRY.format("c1", 1, "'cut\n  c2:\n  short'"),  # the only c2
    "per_case:\n" + _ENTRY.format("c1", 1, "&a [1]") + _ENTRY.format("c2", "*a", "x"),
    "per_case:\n" + _ENTRY.format("c1", 1, "x") + _ENTRY.format("'c2'", 2, "y"),
    "per_case:\n" + _ENTRY.format("c1", 1, "x") + "  c2: {j: {value: 2}}\n",
    "per_case:\n" + _ENTRY.format("c1", 1, "x") + _ENTRY.format("2", 2, "y"),
    "---\nper_case:\n" + _ENTRY.format("c1", 1, "x") + _ENTRY.format("c2", 2, "y"),
    "per_case:\n    c1:\n      j: 1\n    c2:\n      j: 2\n",
    "per_case :\n" + _ENTRY.format("c1", 1, "x") + _ENTRY.format("c2", 2, "y"),
    " note: 'a\nper_case:\n" + _ENTRY.format("c1", 9, "fake") + _ENTRY.format("c2", 9, "z")
    + " '\n per_case:\n" + "".join(" " + ln + "\n" for ln in (
        _ENTRY.format("c1", 1, "x") + _ENTRY.format("c2", 2, "y")).splitlines()),
])
def test_sliced_entries_are_the_whole_parse_or_refused(tmp_path: Path, text: str) -> None:
    from eval_harness.aeh.cases import _entries_of
    from eval_harness.aeh.scoring import read_summary

    (tmp_path / "summary.yaml").write_text(text)
    got = _entries_of(tmp_path, ["c1", "c2"])
    whole = read_summary(str(tmp_path))["per_case"]  # every one is readable YAML
    if text == _WRITTEN:
        assert got == {i: whole[i] for i in ("c1", "c2")}
    else:
        assert got is None, (got, whole)


def test_runs_listing_parses_each_summary_a_fixed_number_of_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eval_dir = _runs(tmp_path)
    reads = _count_summary_reads(monkeypatch)
    code, out, err = run_cli("runs", str(eval_dir), "--json")
    assert code == 0, err
    assert all(sum(r["counts"].values()) >= 2 for r in json.loads(out))  # several cases
    # the run's facts, then its cases in one pass (it was one parse per case)
    assert dict(reads) == {run.name: 2 for run in eval_dir.iterdir() if run.is_dir()}


_TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["a: b", "'q'", '"dq"', "x\n  c1:\n  y", "#x", "*a", "&a", "- z", "  lead", "1", "yes"])
_JUDGE = st.fixed_dictionaries({
    "value": st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
    | _TEXTS, "rationale": _TEXTS, "judge_type": st.sampled_from(["boolean", "numeric"])})
_IDS = st.from_regex(r"[a-zA-Z0-9_][a-zA-Z0-9_./+()-]{0,8}", fullmatch=True) | st.from_regex(
    r"case-[0-9]{1,4}", fullmatch=True)
#: case ids: mostly plain ones (the sliced path), some any text or numbers (refused)
_KEYS = st.one_of(_IDS, _IDS, _IDS, _IDS, _TEXTS, st.integers(0, 9))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(per_case=st.dictionaries(_KEYS, st.dictionaries(_TEXTS, _JUDGE, max_size=3),
                                min_size=1, max_size=6),
       head=st.dictionaries(st.sampled_from(["run_id", "eval", "judges", "note"]), _TEXTS,
                            max_size=2),
       data=st.data())
def test_sliced_entries_of_dumped_summaries_are_the_whole_parse(
        tmp_path: Path, per_case: dict[Any, Any], head: dict[str, Any], data: Any) -> None:
    import yaml

    from eval_harness.aeh.cases import _entries_of
    from eval_harness.aeh.scoring import read_summary

    (tmp_path / "summary.yaml").write_text(
        yaml.dump({**head, "per_case": per_case}, default_flow_style=False, sort_keys=False))
    whole = {str(k): v for k, v in reversed(list(
        read_summary(str(tmp_path))["per_case"].items()))}
    ids = data.draw(st.lists(st.sampled_from(sorted(whole)), min_size=1, unique=True))
    got = _entries_of(tmp_path, ids)
    if got is not None:
        assert [repr(got[i]) for i in ids] == [repr(whole[i]) for i in ids]
