"""MLflow logging end to end: a small matrix runs (a real cli agent), the analysis is logged
to a local file store, and MLflow's own client reads back runs, params, metrics and
artifacts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

AGENT = """\
import sys
model, ctx, case = sys.argv[1], sys.argv[2], sys.argv[3]
print(f"{model} {ctx} {case}" + (" good" if model == "big" else ""))
"""


def _project(tmp: Path, store: Path) -> Path:
    (tmp / "agent.py").write_text(AGENT)
    cases = tmp / "cases"
    for i in range(3):
        (cases / f"c{i}").mkdir(parents=True)
        (cases / f"c{i}" / "input.yaml").write_text(f"prompt: task {i}\n")
    config = tmp / "eval.yaml"
    config.write_text(f"""\
name: ml-demo
runner:
  type: cli
  command: "{sys.executable} -S {tmp / 'agent.py'} {{model}} {{context}} {{case_id}}"
dataset:
  path: cases
matrix:
  factors:
    model: [big, small]
    context: [none, docs]
judges:
  - name: good
    check: "return 'good' in outputs['output'], 'looked'"
mlflow:
  experiment: team-evals
  tracking_uri: {store.as_uri()}
  tags: {{team: ml}}
""")
    return config


def test_analysis_is_logged_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow import MlflowClient

    store = tmp_path / "store"
    config = _project(tmp_path, store)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    code, _, err = run_cli("--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                           "--output", str(tmp_path / "out"), "--no-judge-check")
    assert code == 0, err
    assert "mlflow: logged ml-demo" in err
    client = MlflowClient(tracking_uri=store.as_uri())
    exp = client.get_experiment_by_name("team-evals")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 1 and len(children) == 4
    parent = parents[0]
    assert parent.data.tags["eval_name"] == "ml-demo" and parent.data.tags["team"] == "ml"
    anova = json.loads((tmp_path / "out" / "anova.json").read_text())
    ids = {c["condition_id"] for c in anova["condition_summaries"]}
    assert set(parent.data.tags["condition_ids"].split(",")) == ids
    assert parent.data.params["correction"] == "holm"
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"anova.json", "comparisons.json", "report.html"} <= artifacts
    logged = Path(client.download_artifacts(parent.info.run_id, "anova.json", str(tmp_path)))
    assert json.loads(logged.read_text())["terms"].keys() == anova["terms"].keys()
    for child in children:
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.tags["condition_id"] in ids
        params, metrics = child.data.params, child.data.metrics
        assert set(params) == {"model", "context", "condition_id"}
        want = 1.0 if params["model"] == "big" else 0.0
        assert metrics["mean.good"] == want and metrics["pass_rate.good"] == want
        assert metrics["mean.composite"] == want and metrics["pass_rate"] == want
        assert metrics["n_samples"] == 3 and metrics["n_errored"] == 0
        assert metrics["latency_s"] > 0


def test_default_store_is_local_mlruns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_harness.config.blocks import MlflowBlock
    from eval_harness.reports.mlflow_log import tracking_uri

    monkeypatch.chdir(tmp_path)
    assert tracking_uri(MlflowBlock(), {}) == (tmp_path / "mlruns").as_uri()
    assert tracking_uri(MlflowBlock(), {"MLFLOW_TRACKING_URI": "http://127.0.0.1:5000"}) \
        == "http://127.0.0.1:5000"
    assert tracking_uri(MlflowBlock(tracking_uri="sqlite:///x.db"),
                        {"MLFLOW_TRACKING_URI": "http://127.0.0.1:5000"}) == "sqlite:///x.db"


def test_missing_extra_exits_2_with_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _project(tmp_path, tmp_path / "store")
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow -> ImportError
    code, _, err = run_cli("--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                           "--no-judge-check")
    assert code == 2
    assert "pip install 'factorial-eval-harness[mlflow]'" in err
    assert not (tmp_path / "runs").exists()  # refused before any cell ran
