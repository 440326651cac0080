"""Dataset loading: folders, YAML/JSONL files, ids, duplicates, escapes, filters."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eval_harness.config.dataset import load_dataset
from eval_harness.errors import DatasetError


def _case_dir(root: Path, cid: str, inp: str = "question: q\n", **files: str) -> Path:
    d = root / cid
    d.mkdir(parents=True)
    (d / "input.yaml").write_text(inp)
    for name, text in files.items():
        (d / name).write_text(text)
    return d


def test_folder_dataset(tmp_path: Path) -> None:
    _case_dir(tmp_path, "b-2", expected_yaml="x")
    _case_dir(tmp_path, "a.1", **{"expected.yaml": "answer: 42\n",
                                  "annotations.yaml": "tier: simple\ntags: {domain: math}\n"})
    cases = load_dataset(tmp_path)
    assert [c.case_id for c in cases] == ["a.1", "b-2"]
    assert cases[0].expected == {"answer": 42}
    assert cases[0].tags == {"tier": "simple", "domain": "math"}
    assert cases[0].input == {"question": "q"}


def test_jsonl_and_yaml_files(tmp_path: Path) -> None:
    jl = tmp_path / "c.jsonl"
    jl.write_text("\n".join(json.dumps({"id": f"c{i}", "input": {"q": i}}) for i in range(3)))
    assert [c.case_id for c in load_dataset(jl)] == ["c0", "c1", "c2"]
    y = tmp_path / "c.yaml"
    y.write_text("c1: {input: 'hello'}\nc2: {input: {q: 2}, expected: 4}\n")
    cases = load_dataset(y)
    assert cases[0].input == {"prompt": "hello"}
    assert cases[1].expected == 4


@pytest.mark.parametrize("bad", ["../x", "a/b", "a b", "", ".", "..", "é"])
def test_bad_case_ids(tmp_path: Path, bad: str) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"id": bad, "input": {}}))
    with pytest.raises(DatasetError, match="invalid case id"):
        load_dataset(f)


def test_errors_name_the_file_and_the_jsonl_line(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"id": "ok", "input": {}}) + "\n" + json.dumps({"id": "a b", "input": {}}))
    with pytest.raises(DatasetError) as err:
        load_dataset(f)
    assert str(err.value).startswith(f"{f}:2: id: invalid case id 'a b'")
    assert err.value.file == str(f) and err.value.line == 2 and err.value.key_path == "id"
    y = tmp_path / "c.yaml"
    y.write_text("- {id: c1, input: {q: 1}}\n- {id: c2, inputs: {q: 2}}\n")
    with pytest.raises(DatasetError) as err:
        load_dataset(y)
    assert str(err.value).startswith(f"{y}: cases[1]: unknown case key(s): inputs")


@pytest.mark.parametrize("bad", ["17", "0017", "1.5"])
def test_numeric_case_ids_say_quote_them(tmp_path: Path, bad: str) -> None:
    y = tmp_path / "c.yaml"
    y.write_text(f"- {{id: {bad}, input: {{q: 1}}}}\n")
    with pytest.raises(DatasetError, match="is a number") as err:
        load_dataset(y)
    assert err.value.hint is not None and "quote it" in err.value.hint


def test_duplicates_rejected(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"id": "a", "input": {}}) + "\n" + json.dumps({"id": "a", "input": {}}))
    with pytest.raises(DatasetError, match="duplicate case id"):
        load_dataset(f)


def test_symlink_escape_rejected(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    outside = tmp_path / "outside"
    _case_dir(outside, "evil")
    os.symlink(outside / "evil", root / "evil")
    with pytest.raises(DatasetError, match="escapes"):
        load_dataset(root)


def test_filters(tmp_path: Path) -> None:
    for i in range(5):
        _case_dir(tmp_path, f"c{i}")
    assert [c.case_id for c in load_dataset(tmp_path, only=["c3", "c1"])] == ["c1", "c3"]
    assert len(load_dataset(tmp_path, limit=2)) == 2
    with pytest.raises(DatasetError, match="unknown case id"):
        load_dataset(tmp_path, only=["zz"])


def test_case_hash_changes_with_definition(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"id": "a", "input": {"q": 1}, "expected": 1}))
    h1 = load_dataset(f)[0].case_hash
    f.write_text(json.dumps({"id": "a", "input": {"q": 1}, "expected": 2}))
    assert load_dataset(f)[0].case_hash != h1


@pytest.mark.parametrize("ann", ["hard", 1.5, True, ["a"]])
def test_annotations_must_be_a_mapping(tmp_path: Path, ann: object) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"id": "a", "input": {}, "annotations": ann}))
    with pytest.raises(DatasetError, match="annotations must be a mapping") as err:
        load_dataset(f)
    assert err.value.key_path == "annotations" and err.value.line == 1
    d = tmp_path / "ds"
    _case_dir(d, "c1", **{"annotations.yaml": "- just\n- a list\n"})
    with pytest.raises(DatasetError, match=r"annotations\.yaml must hold a mapping"):
        load_dataset(d)
