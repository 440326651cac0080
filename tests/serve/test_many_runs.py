"""Issue 34 (dashboard with 10,000 runs): a repeat load of the evals page and each poll of
the token endpoints do O(evals) file-system work, not O(runs) — counted here in ``stat`` /
``scandir`` calls and ``run.json`` reads with 2,000 synthetic runs (no timing: speed is
measured in bench/bench_serve.py) — and the token still changes when a run is added,
starts or finishes."""
from __future__ import annotations

import json
import os
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import BASE

from eval_harness.matrix.builder import Condition
from eval_harness.store import rundirs

RUNS_PER_EVAL = 1000
EVALS = ("alpha", "beta")


def _write_run(eval_dir: Path, i: int, status: str = "complete") -> Path:
    run = eval_dir / f"run-{i:05d}"
    (run / "cases").mkdir(parents=True)
    cond = {"condition_id": f"{i % 8:012x}", "levels": {"model": f"m{i % 8}"}}
    (run / "condition.json").write_text(json.dumps(cond))
    (run / "run.json").write_text(json.dumps({
        **cond, "run_id": run.name, "replication": 1 + i // 8, "status": status,
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": None if status == "running" else "2026-01-01T00:01:00Z"}))
    return run


@pytest.fixture()
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, object]]:
    root = tmp_path / "runs"
    for name in EVALS:
        for i in range(RUNS_PER_EVAL):
            _write_run(root / name, i)
    from eval_harness.serve import app as app_module
    from eval_harness.serve import catalog

    monkeypatch.setattr(catalog, "REWALK_S", 0.0)  # every request checks the catalog
    # the background analysis is not what a request pays for (it is counted elsewhere)
    monkeypatch.setattr(app_module, "warm", lambda dash: None)
    app = app_module.create_app([root], host="127.0.0.1", port=8765, wait_s=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

        client = TestClient(app, base_url=BASE)
    with client:
        yield root, client
    app.dash.cache.close()


@pytest.fixture()
def fs_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of os.stat / os.scandir calls and run-file reads while a request runs."""
    from eval_harness.serve import catalog, evaldata

    calls: Counter[str] = Counter()

    def counting(name, fn):
        def wrapped(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(os, "stat", counting("stat", os.stat))
    monkeypatch.setattr(os, "scandir", counting("scandir", os.scandir))
    monkeypatch.setattr(catalog, "read_json", counting("read", catalog.read_json))
    monkeypatch.setattr(evaldata, "read_json", counting("read", evaldata.read_json))
    return calls


def _cost(calls: Counter[str], client, url: str) -> int:
    calls.clear()
    resp = client.get(url)
    assert resp.status_code == 200, resp.text[:500]
    return sum(calls.values())


def test_repeat_requests_do_work_per_eval_not_per_run(many, fs_calls) -> None:
    _, client = many
    n_runs = len(EVALS) * RUNS_PER_EVAL
    first = _cost(fs_calls, client, "/")
    assert first >= n_runs  # the first load reads every run (the check counts real work)
    assert "alpha" in client.get("/").text
    for url in ("/", "/token", "/e/alpha/token", "/", "/e/beta/token"):
        cost = _cost(fs_calls, client, url)
        assert cost <= 20 * len(EVALS), (url, dict(fs_calls))


def _token(client, url: str = "/e/alpha/token") -> str:
    return client.get(url).json()["token"]


def test_token_changes_when_a_run_is_added_starts_or_finishes(many) -> None:
    root, client = many
    t0, g0 = _token(client), _token(client, "/token")
    assert _token(client) == t0  # stable while nothing changes

    _write_run(root / "alpha", RUNS_PER_EVAL)  # a new run
    t1 = _token(client)
    assert t1 != t0 and _token(client, "/token") != g0

    # an existing, complete run is resumed and then finishes, through the store's writer
    path = root / "alpha" / "run-00003"
    cond = Condition(condition_id="000000000003", levels={"model": "m3"}, label="m3")
    run = rundirs.RunDir(path, cond, 1, "d" * 12)
    rundirs.update_run_json(run, "alpha", status="running", shard=None, starting=True)
    t2 = _token(client)
    assert t2 != t1
    case = path / "cases" / "c0"  # a case of the running run finishes
    case.mkdir()
    (case / "record.json").write_text("{}")
    t3 = _token(client)
    assert t3 != t2
    rundirs.update_run_json(run, "alpha", status="complete", shard=None)
    t4 = _token(client)
    assert t4 != t3
    assert _token(client, "/e/beta/token") == _token(client, "/e/beta/token")
    page = client.get("/").text
    assert "1001" in page or "1,001" in page  # the evals page counts the added run
