"""Issue 34's dashboard attacks (minor): bad labels.jsonl lines, hostile posted labels,
huge answers, deep traces and symlinked run files. Pages render and say what is wrong;
nothing is a 500, nothing outside the served root is shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from serve_helpers import token_of

BAD_LINES = {"not json": b"{not json", "an array": b'["run", "case"]',
             "100k deep": b"[" * 100_000 + b"]" * 100_000, "NUL": b'{"run": "\x00"}',
             "20 MB": b'{"run": "' + b"x" * 20_000_000 + b'"'}


def _good_label(client) -> dict[str, object]:
    data = client.app.dash.cache.cached("starter")
    run = next(iter(data.runs.values()))
    return {"schema_version": 1, "run": run.run_id, "case": data.case_order[0],
            "condition": run.condition_id, "replication": 1, "judge": "correct",
            "label": "wrong", "who": "t", "when": "2026-01-01T00:00:00+00:00"}


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_a_bad_labels_line_is_named_and_the_pages_still_render(client, runs_copy: Path,
                                                               kind: str) -> None:
    good = json.dumps(_good_label(client)).encode()
    (runs_copy / "starter" / "labels.jsonl").write_bytes(
        good + b"\n" + BAD_LINES[kind] + b"\n" + good + b"\n")
    case = client.app.dash.cache.cached("starter").case_order[0]
    for url in ("/e/starter", f"/e/starter/case/{case}", "/e/starter/calibration"):
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        assert "labels.jsonl:2" in r.text, url  # which file and which line
        assert len(r.text) < 2_000_000, url  # the bad line itself is not echoed
    calibration = client.get("/e/starter/calibration").text
    assert "1 label(s)" in calibration  # the good lines still count (one sample, twice)


def _post(client, raw: str):
    token = token_of(client.get("/e/starter").text)
    return client.post("/e/starter/labels", content=raw,
                       headers={"Content-Type": "application/json", "X-CSRF-Token": token,
                                "Origin": "http://127.0.0.1:8765"})


@pytest.mark.parametrize("label", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "true",
                                   "false"])
def test_a_posted_label_that_is_no_finite_number_is_refused(client, runs_copy: Path,
                                                            label: str) -> None:
    body = {k: v for k, v in _good_label(client).items()
            if k in ("run", "case", "judge")}
    raw = json.dumps(body)[:-1] + f', "label": {label}}}'
    r = _post(client, raw)
    assert r.status_code == 400, r.text
    assert not (runs_copy / "starter" / "labels.jsonl").exists()
    ok = _post(client, json.dumps({**body, "label": 0.5}))
    assert ok.status_code == 200, ok.text
    [line] = (runs_copy / "starter" / "labels.jsonl").read_text().splitlines()
    assert json.loads(line)["label"] == 0.5
    for page in ("/e/starter", "/e/starter/calibration"):
        assert client.get(page).status_code == 200


def _case_folder(client, runs_copy: Path) -> tuple[str, Path]:
    data = client.app.dash.cache.cached("starter")
    case = data.case_order[0]
    run = sorted(data.runs.values(), key=lambda r: (r.condition_id, r.replication))[0]
    return case, Path(run.path) / "cases" / case


@pytest.mark.parametrize(("size", "note"), [(40_000_000, "larger than 16 MB"),
                                            (3_000_000, "answer cut")])
def test_a_huge_answer_is_clipped_when_rendered(client, runs_copy: Path, size: int,
                                               note: str) -> None:
    case, folder = _case_folder(client, runs_copy)
    outputs = json.loads((folder / "outputs.json").read_text())
    outputs["output"] = "A" * size
    (folder / "outputs.json").write_text(json.dumps(outputs))
    r = client.get(f"/e/starter/case/{case}")
    assert r.status_code == 200
    assert len(r.content) < 3_000_000 and note in r.text


def _deep_trace(depth: int) -> str:
    """trace.json with one step nested ``depth`` levels (written as text: no recursion)."""
    head = '{"kind": "agent", "name": "n", "children": ['
    return ('{"schema_version": 1, "dropped": 0, "steps": [' + head * depth
            + '{"kind": "tool", "name": "leaf"}' + "]}" * depth + "]}")


def _long_trace(n: int) -> str:
    return json.dumps({"schema_version": 1, "dropped": 0, "steps": [
        {"kind": "tool", "name": f"s{i}", "input": {"i": i}} for i in range(n)]})


@pytest.mark.parametrize(("trace", "note"), [
    (lambda: _deep_trace(50_000), "trace.json not shown"),
    (lambda: _long_trace(200_000), "trace cut: 500 of 200,000")])
def test_a_deep_or_long_trace_is_a_page_saying_so(client, runs_copy: Path, trace,
                                                  note: str) -> None:
    case, folder = _case_folder(client, runs_copy)
    (folder / "trace.json").write_text(trace())
    r = client.get(f"/e/starter/case/{case}")
    assert r.status_code == 200
    assert note in r.text and len(r.content) < 3_000_000


def test_a_symlinked_outputs_json_outside_the_root_is_not_shown(client, runs_copy: Path,
                                                                tmp_path: Path) -> None:
    case, folder = _case_folder(client, runs_copy)
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"output": "SECRET-OUTSIDE-THE-SERVED-ROOT"}))
    (folder / "outputs.json").unlink()
    (folder / "outputs.json").symlink_to(outside)
    r = client.get(f"/e/starter/case/{case}")
    assert r.status_code == 200
    assert "SECRET-OUTSIDE" not in r.text and "symbolic link" in r.text
