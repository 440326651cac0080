"""The run-format registry is public: a third format registered from outside the core is
discovered, read into the tidy frame (with its options), and browsed."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence, Set
from pathlib import Path
from typing import Any

import pytest

from eval_harness.analysis.loading import formats
from eval_harness.analysis.loading.browse import case_across_conditions, list_runs
from eval_harness.analysis.loading.chunk import Chunk
from eval_harness.analysis.loading.formats import SURE, RunFormat, classify, register_format
from eval_harness.analysis.loading.packed import Packed, pack
from eval_harness.analysis.loading.run_views import CaseView, JudgeView, RunInfo
from eval_harness.analysis.loading.runfiles import UnreadableRun, read_json_object
from eval_harness.analysis.loading.tidy_frame import load_runs


class ToyFormat(RunFormat):
    """``toy.json``: {run_id, levels, cases: {case: passed}}; option ``flip``."""

    name = "toy"

    def recognise(self, names: Set[str]) -> int:
        return SURE if "toy.json" in names else 0

    def prepare(self, judge_specs: Any, options: Mapping[str, Any]) -> bool:
        if set(options) - {"flip"}:
            raise ValueError("toy takes flip")
        return bool(options.get("flip"))

    def read_run(self, run_dir: str, state: Any, specs: Any
                 ) -> tuple[dict[str, Any], Packed] | UnreadableRun:
        try:
            doc = read_json_object(str(Path(run_dir) / "toy.json"))
        except UnreadableRun as exc:
            return exc
        chunk = Chunk(specs, "")
        for case, passed in doc["cases"].items():
            rec = {"case_id": case, "scores": {"ok": {"value": passed != state,
                                                       "kind": "boolean"}}}
            chunk.add_checked(rec, rec, 1, run_dir)
        return ({"eval": "toys", "run_id": doc["run_id"], "condition_id": doc["run_id"],
                 "levels": doc["levels"], "replication": 1, "finished_at": None,
                 "cost_usd": None, "format": self.name}, pack(chunk))

    def run_infos(self, paths: Sequence[Path]) -> list[RunInfo]:
        out = []
        for p in paths:
            doc = read_json_object(str(p / "toy.json"))
            out.append(RunInfo(p, doc["run_id"], doc["run_id"], doc["levels"], 1, "complete",
                               {"ok": len(doc["cases"])}, layout=self.name))
        return out

    def case_ids(self, path: Path) -> list[str]:
        return list(read_json_object(str(path / "toy.json"))["cases"])

    def read_cases(self, path: Path, case_ids: Sequence[str]) -> Iterator[CaseView]:
        cases = read_json_object(str(path / "toy.json"))["cases"]
        for cid in case_ids:
            if cid in cases:
                yield CaseView(cid, "ok", float(cases[cid]),
                               [JudgeView("ok", cases[cid], None, False, None)])


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(formats, "_FORMATS", dict(formats._FORMATS))  # registered here only
    register_format(ToyFormat())
    for model, results in (("a", [True, True, False]), ("b", [False, False, True])):
        run = tmp_path / "runs" / f"run-{model}"
        run.mkdir(parents=True)
        doc = {"run_id": f"run-{model}", "levels": {"model": model},
               "cases": {f"c{i}": r for i, r in enumerate(results)}}
        (run / "toy.json").write_text(json.dumps(doc))
    return tmp_path / "runs"


def test_a_registered_format_is_discovered_loaded_and_browsed(toy: Path) -> None:
    assert classify({"toy.json"}) == "toy" and classify({"run.json"}) == "native"
    frame = load_runs(toy)
    assert frame.attrs["formats"] == ["toy"]
    means = frame[frame.judge == "composite"].groupby("model", observed=True)["value"].mean()
    assert means.round(3).to_dict() == {"a": 0.667, "b": 0.333}
    flipped = load_runs(toy, format_options={"toy": {"flip": True}})
    assert flipped[flipped.judge == "composite"]["value"].mean() == pytest.approx(0.5)
    runs = list_runs([toy])
    assert [r.layout for r in runs] == ["toy", "toy"]
    views = case_across_conditions(runs, "c2")
    assert [v.composite for v in views] == [0.0, 1.0]


def test_format_options_are_checked(toy: Path) -> None:
    with pytest.raises(ValueError, match="toy takes flip"):
        load_runs(toy, format_options={"toy": {"colour": 1}})
    with pytest.raises(ValueError, match="no run format named 'nope'"):
        load_runs(toy, format_options={"nope": {}})


def test_native_cannot_be_replaced() -> None:
    fmt = RunFormat()
    fmt.name = "native"
    with pytest.raises(ValueError):
        register_format(fmt)
