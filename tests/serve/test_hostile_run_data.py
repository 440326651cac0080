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
