"""Store: atomic writes, the resume index (newest duplicate wins), run-directory reuse."""
from __future__ import annotations

import json
from pathlib import Path

from eval_harness._util.atomic_files import atomic_write_json, read_json
from eval_harness.matrix.builder import make_condition
from eval_harness.store.index import ResumeIndex
from eval_harness.store.rundirs import finish_run_dir, open_run_dirs


def test_atomic_write_leaves_no_temp_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    atomic_write_json(target, {"a": 1})
    atomic_write_json(target, {"a": 2})
    assert read_json(target) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]
    (tmp_path / "torn.json").write_text('{"a": ')
    assert read_json(tmp_path / "torn.json") is None


def _write_run(root: Path, name: str, cid: str, rep: int, cases: dict[str, str]) -> None:
    d = root / name
    (d / "cases").mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"condition_id": cid, "replication": rep}))
    for case, when in cases.items():
        (d / "cases" / case).mkdir()
        (d / "cases" / case / "record.json").write_text(json.dumps(
            {"status": "ok", "config_digest": "d1", "finished_at": when}))
    (d / "cases" / "half").mkdir()  # a case without record.json: not complete
    (d / "cases" / "half" / "outputs.json").write_text("{")


def test_index_counts_complete_records_and_keeps_newest_duplicate(tmp_path: Path) -> None:
    _write_run(tmp_path, "2026-01-01-x", "cid", 1, {"a": "2026-01-01T00:00", "b": "2026-01-01T00:00"})
    _write_run(tmp_path, "2026-02-01-x", "cid", 1, {"b": "2026-02-01T00:00"})
    index = ResumeIndex.scan(tmp_path)
    assert set(index.records) == {("cid", 1, "a"), ("cid", 1, "b")}
    assert index.get("cid", 1, "b").run_dir.name == "2026-02-01-x"
    assert [(k, p.name) for k, p in index.duplicates] == [(("cid", 1, "b"), "2026-01-01-x")]
    assert index.get("cid", 1, "half") is None


def test_run_dirs_are_reused_and_status_recounted(tmp_path: Path) -> None:
    cond = make_condition({"model": "m", "effort": "hi"})
    digests = {cond.condition_id: "d1"}
    dirs = open_run_dirs(tmp_path, "ev", [(cond, 1), (cond, 2)], {}, digests, 2, "1/2")
    run1 = dirs[(cond.condition_id, 1)]
    assert run1.run_id.endswith("m-effort-hi-r1")
    again = open_run_dirs(tmp_path, "ev", [(cond, 1)], {}, digests, 2, "2/2")
    assert again[(cond.condition_id, 1)].path == run1.path
    info = json.loads((run1.path / "run.json").read_text())
    assert info["shards"] == ["1/2", "2/2"] and info["status"] == "running"
    assert json.loads((run1.path / "condition.json").read_text()) == {
        "condition_id": cond.condition_id, "levels": {"model": "m", "effort": "hi"}}
    case = run1.case_dir("c1")
    case.mkdir(parents=True)
    atomic_write_json(case / "record.json", {"config_digest": "d1"})
    assert finish_run_dir(run1, "ev", ["c1"], aborted=False, shard=None) == "complete"
    assert finish_run_dir(run1, "ev", ["c1", "c2"], aborted=True, shard=None) == "aborted"
