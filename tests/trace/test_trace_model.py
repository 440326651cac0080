"""The trace model: normalisation, nesting, clipping, masking, limits, reading back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_harness._util.redact import secret_key_name
from eval_harness.trace import model
from eval_harness.trace.model import MASK, MAX_TEXT, Step, build_trace
from eval_harness.trace.reader import read_trace


@pytest.mark.parametrize(("key", "secret"), [
    ("api_key", True), ("apiKey", True), ("x-api-key", True), ("password", True),
    ("db_password", True), ("token", True), ("access_token", True), ("secret", True),
    ("client_secret", True), ("Authorization", True), ("cookie", True), ("credentials", True),
    ("max_tokens", False), ("keyword", False), ("key", False), ("query", False),
    ("monkey", False), ("tokens", False),
])
def test_secret_key_table(key: str, secret: bool) -> None:
    assert secret_key_name(key) is secret


def test_legacy_and_new_forms_normalise() -> None:
    trace = build_trace(["search", {"tool": "calc", "arguments": {"x": 1}},
                         {"type": "retrieval", "name": "idx", "args": {"q": "a"},
                          "result": ["d1"], "duration_s": 0.25, "started": 3},
                         {"kind": "llm", "name": "m", "duration": float("nan")}])
    got = [(s.kind, s.name, s.input, s.output, s.started, s.duration) for s in trace.steps]
    assert got == [("tool", "search", None, None, None, None),
                   ("tool", "calc", {"x": 1}, None, None, None),
                   ("retrieval", "idx", {"q": "a"}, ["d1"], 3.0, 0.25),
                   ("llm", "m", None, None, None, None)]


def test_nesting_clipping_and_masking() -> None:
    raw = [{"kind": "llm", "name": "plan", "children": [
        {"kind": "tool", "name": "search",
         "input": {"api_key": "sk-123456789", "nested": [{"password": "hunter22"}],
                   "max_tokens": 5, "token": None},
         "output": "y" * (MAX_TEXT + 10)}]}]
    step = build_trace(raw).steps[0].children[0]
    assert step.input == {"api_key": MASK, "nested": [{"password": MASK}], "max_tokens": 5,
                          "token": None}
    assert step.output == "y" * MAX_TEXT + " … [10 more characters]"


def test_limits_drop_and_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "MAX_STEPS", 3)
    trace = build_trace([{"kind": "tool", "name": str(i)} for i in range(5)])
    assert len(trace.steps) == 3 and trace.dropped == 2
    deep: dict = {"kind": "tool", "name": "0"}
    node = deep
    for i in range(1, model.MAX_DEPTH + 3):
        node["children"] = [{"kind": "tool", "name": str(i)}]
        node = node["children"][0]
    monkeypatch.setattr(model, "MAX_STEPS", 1000)
    t = build_trace([deep])
    assert len(list(t.walk())) == model.MAX_DEPTH and t.dropped == 3
    items = build_trace([{"kind": "tool", "name": "t", "input": list(range(150))}]).steps[0]
    assert len(items.input) == model.MAX_ITEMS + 1 and items.input[-1] == "… [50 more items]"


def test_round_trip_through_the_reader(tmp_path: Path) -> None:
    trace = build_trace([{"kind": "llm", "name": "a", "children": [{"kind": "tool", "name": "b"}]}])
    (tmp_path / "trace.json").write_text(json.dumps(trace.to_json()))
    back = read_trace(tmp_path)
    assert back == trace and isinstance(back.steps[0].children[0], Step)
    assert [s.name for s in back.walk()] == ["a", "b"]


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"steps": 3}'])
def test_reader_never_raises_on_bad_files(tmp_path: Path, content: str) -> None:
    (tmp_path / "trace.json").write_text(content)
    assert read_trace(tmp_path) is None
    assert read_trace(tmp_path / "missing") is None


def test_reader_refuses_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(build_trace(["a"]).to_json()))
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "trace.json").symlink_to(target)
    assert read_trace(tmp_path / "case") is None


def test_a_hostile_depth_neither_recurses_nor_is_kept() -> None:
    raw: dict = {"kind": "tool", "name": "0"}
    node = raw
    for i in range(1, 50_000):  # far past the interpreter's recursion limit
        node["children"] = [{"kind": "tool", "name": str(i)}]
        node = node["children"][0]
    trace = build_trace([raw])
    assert len(list(trace.walk())) == model.MAX_DEPTH
    assert trace.dropped == 50_000 - model.MAX_DEPTH
