"""The dashboard over HTTP (Starlette's TestClient): every page, filters, labels, errors."""

from __future__ import annotations

import json
from pathlib import Path

from serve_helpers import BASE, PORT, ready, token_of, tree_digest

from eval_harness.store.labels import read_labels


def _ids(client) -> tuple[list[str], str]:
    data = client.app.dash.cache.cached("starter")
    return data.condition_ids, data.case_order[0]


def test_every_page_renders(client) -> None:
    home = client.get("/")
    assert home.status_code == 200 and "starter" in home.text
    page = client.get("/e/starter")
    assert page.status_code == 200
    for part in ("Matrix", "ANOVA", "Leaderboard", "not distinguishable from the best",
                 "none can be named the cheapest", 'id="case-grid"'):  # no cost recorded
        assert part in page.text, part
    cids, case = _ids(client)
    assert client.get("/").text.count("not analysed yet") == 0  # analysed now: numbers shown
    assert "complete 4" in client.get("/").text  # the run statuses
    for url in ["/e/starter/trends", "/e/starter/compare", f"/e/starter/case/{case}",
                "/e/starter/search?q=add", "/e/starter/calibration", "/e/starter/token",
                "/token", *[f"/e/starter/chart/{n}.svg" for n in
                            ("means", "main_effects", "interactions", "heatmap", "pareto")]]:
        r = client.get(url)
        assert r.status_code == 200, (url, r.text[:300])
    svg = client.get("/e/starter/chart/means.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml") and "<svg" in svg.text
    case_page = client.get(f"/e/starter/case/{case}").text
    assert "Expected" in case_page and "answered" in case_page  # the judge's rationale
    assert case_page.count('class="attempt v-') == len(cids)  # one attempt per condition


def test_filters_and_pagination(client) -> None:
    client.get("/e/starter")
    cids, _ = _ids(client)
    data = client.app.dash.cache.cached("starter")
    failed = client.get("/e/starter?verdict=failed").text
    want = {c for c in data.case_order if (data.verdicts.loc[c] == "failed").any()}
    shown = {c for c in data.case_order if f'/case/{c}"' in failed}
    assert shown == want and want
    by_judge = client.get("/e/starter?judge=correct&level=model%3Dstarter-small").text
    assert by_judge.count("<th title=") == 2  # the two conditions of the small model
    search = client.get("/e/starter/search?q=mul-0").text
    assert "/case/mul-01" in search and "/case/add-01" not in search
    assert client.get("/e/starter?page=99").status_code == 200  # clamped to the last page
    compare = client.get(f"/e/starter/compare?a={cids[3]}&b={cids[0]}&category=regressed"
                         "&sort=diff").text
    rows = compare.count('<tr data-category="regressed">')
    assert rows > 0 and 'data-category="improved">' not in compare.split("<tbody>")[1]


def test_unknown_names_are_404(client) -> None:
    client.get("/e/starter")
    for url in ["/e/nope", "/e/starter/case/nope", "/e/starter/compare?a=ffffffffffff",
                "/e/starter?verdict=great", "/e/starter?judge=nope", "/e/starter?level=x%3Dy",
                "/e/starter/compare?baseline=0", "/e/starter/compare?category=x",
                "/e/starter/chart/nope.svg", "/e/starter?page=x"]:
        r = client.get(url)
        assert r.status_code == 404, url
        assert "Not found" in r.text


def test_label_post_writes_only_labels(client, runs_copy: Path) -> None:
    page = client.get("/e/starter")
    token = token_of(page.text)
    data = client.app.dash.cache.cached("starter")
    run = next(iter(data.runs.values()))
    before = tree_digest(runs_copy)
    body = {"run": run.run_id, "case": data.case_order[0], "judge": "correct", "label": "wrong"}
    r = client.post("/e/starter/labels", content=json.dumps(body),
                    headers={"Content-Type": "application/json", "X-CSRF-Token": token,
                             "Origin": "http://127.0.0.1:8765"})
    assert r.status_code == 200, r.text
    assert tree_digest(runs_copy) == before  # nothing but labels.jsonl was written
    rows = read_labels(runs_copy / "starter" / "labels.jsonl")
    assert [(x.run, x.case, x.condition, x.replication, x.judge, x.label) for x in rows] == [
        (run.run_id, data.case_order[0], run.condition_id, 1, "correct", "wrong")]
    bad = client.post("/e/starter/labels", content=json.dumps({**body, "judge": "nope"}),
                      headers={"Content-Type": "application/json", "X-CSRF-Token": token,
                               "Origin": "http://127.0.0.1:8765"})
    assert bad.status_code == 400 and "no judge" in bad.json()["error"]
    assert len(read_labels(runs_copy / "starter" / "labels.jsonl")) == 1


def test_page_reflects_runs_changing(client, runs_copy: Path, monkeypatch) -> None:
    from eval_harness.serve import catalog
    from eval_harness.store.rundirs import touch_eval_folder

    first = client.get("/e/starter/token").json()["token"]
    run = sorted((runs_copy / "starter").glob("*/run.json"))[0]
    rec = json.loads(run.read_text())
    rec["status"] = "running"  # a run in progress: its case folders are watched too
    run.write_text(json.dumps(rec))
    # a status change is announced by the eval folder's mtime (store.rundirs.update_run_json
    # does this); an unannounced edit shows at the next full pass
    monkeypatch.setattr(catalog, "FULL_PASS_S", 0.0)
    assert client.get("/e/starter/token").json()["token"] != first
    monkeypatch.setattr(catalog, "FULL_PASS_S", 3600.0)
    touch_eval_folder(runs_copy / "starter")
    second = client.get("/e/starter/token").json()["token"]
    assert second != first
    case = next((run.parent / "cases").iterdir())
    (case / "record.json").write_text((case / "record.json").read_text())  # rewritten
    import os

    os.utime(case, ns=(1, 1))
    assert client.get("/e/starter/token").json()["token"] != second


def test_agent_eval_harness_runs(tmp_path: Path) -> None:
    """agent-eval-harness's layout: the same pages, judge values from the tidy frame."""
    import shutil
    import warnings

    from eval_harness.serve.app import create_app

    root = tmp_path / "aeh"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "aeh_sample_runs", root)
    app = create_app([root], port=PORT, wait_s=120)
    ready(app)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        client = TestClient(app, base_url=BASE)
    key = next(iter(app.dash.catalog.entries()))
    data = app.dash.cache.cached(key)
    case = client.get(f"/e/{key}/case/{data.case_order[0]}")
    assert case.status_code == 200 and case.text.count('class="attempt v-') == len(data.runs)
    for url in ("", "/trends", "/compare", "/calibration", "/search?q=x"):
        assert client.get(f"/e/{key}{url}").status_code == 200, url
    app.dash.cache.close()


def test_baseline_file_compare_and_trend(runs_copy: Path, tmp_path: Path) -> None:
    """A baseline file (--export) is compared against and plotted; the same runs exported
    and compared back are unchanged case by case."""
    import warnings

    from eval_harness.analysis.compare.baseline import export_baseline
    from eval_harness.analysis.loading.tidy_frame import load_runs
    from eval_harness.serve.app import create_app

    base = tmp_path / "baseline.json"
    export_baseline(load_runs([runs_copy]), str(base), compact=True,
                    runs_root=runs_copy / "starter", tool_version="test")
    app = create_app([runs_copy], port=PORT, wait_s=120, baselines=[base])
    ready(app)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        client = TestClient(app, base_url=BASE)
    cid = app.dash.cache.cached("starter").condition_ids[1]
    page = client.get(f"/e/starter/compare?baseline=0&b={cid}").text
    assert "baseline baseline.json" in page and "unchanged 10" in page and "regressed 0" in page
    trends = client.get("/e/starter/trends").text
    assert trends.count("baseline baseline.json") >= 4  # one point per condition
    assert client.get("/e/starter/compare?baseline=1").status_code == 404
    app.dash.cache.close()


def test_case_page_shows_the_stored_trace(client, runs_copy) -> None:
    """The dashboard reads trace.json with the one reader (eval_harness.trace.reader)."""
    import json

    client.get("/e/starter")
    _, case = _ids(client)
    steps = [{"kind": "llm", "name": "planner", "input": None, "output": None, "started": None,
              "duration": 0.5, "children": [{"kind": "tool", "name": "search-tool-x",
                                             "input": {"q": 1}, "output": None,
                                             "started": None, "duration": None,
                                             "children": []}]}]
    for folder in runs_copy.glob(f"starter/*/cases/{case}"):
        (folder / "trace.json").write_text(json.dumps({"schema_version": 1, "steps": steps}))
    page = client.get(f"/e/starter/case/{case}").text
    assert "trace (1 step(s))" in page and "search-tool-x" in page
    nested = page.split("planner", 1)[1]
    assert "<ol>" in nested.split("search-tool-x", 1)[0]  # the tool step is nested
    assert '<span class="dim">llm</span>' in page and "0.5 s" in page  # kind and duration
