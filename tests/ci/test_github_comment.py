"""Issue 34, attack 3: ``python -m eval_harness.ci.github comment`` edits only a comment
that carries our marker AND was written by the token's own identity (``GET /user``; an
Actions token is ``github-actions[bot]``), against a loopback stub of the GitHub REST API;
where editing or commenting is refused (fork PRs) the step does not fail."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from eval_harness.ci import github

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from github_api import BOT, GitHubStub

MARKER = "<!-- factorial-eval-harness:eval -->"


@pytest.fixture
def pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pull-request event for acme/app#7, and the comment body; returns the body."""
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 7}}))
    body = tmp_path / "comment.md"
    body.write_text(f"{MARKER}\n**factorial-eval-harness**: ✅ passed\n")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "event.json"))
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/app")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return body


def _comment(body: Path) -> int:
    return github.main(["comment", "--body", str(body)])


def test_forged_marker_comment_listed_first_is_never_edited(pr, monkeypatch):
    with GitHubStub({"t-user": "eh-bot"}) as gh:
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        monkeypatch.setenv("GH_TOKEN", "t-user")
        forged = gh.add("mallory", f"{MARKER}\nclick here")
        for _ in range(60):  # more than a page of chatter
            gh.add("someone", "lgtm")
        ours = gh.add("eh-bot", f"{MARKER}\nold report")
        assert _comment(pr) == 0
        by_id = {c["id"]: c for c in gh.comments}
        assert by_id[forged]["body"] == f"{MARKER}\nclick here"
        assert by_id[ours]["body"] == pr.read_text()
        assert [m for m, *_ in gh.calls if m != "GET"] == ["PATCH"]
        assert ("PATCH", f"/repos/acme/app/issues/comments/{ours}", "t-user") in gh.calls


def test_actions_token_is_github_actions_bot_and_a_forged_comment_gets_a_new_one(
        pr, monkeypatch):
    with GitHubStub({"t-actions": None}) as gh:
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        monkeypatch.setenv("GITHUB_TOKEN", "t-actions")
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        forged = gh.add("mallory", f"{MARKER}\nclick here")
        assert _comment(pr) == 0  # mallory's is not ours: a new comment
        assert _comment(pr) == 0  # the rerun edits that one
        assert gh.comments[0] == {"id": forged, "body": f"{MARKER}\nclick here",
                                  "user": {"login": "mallory"}}
        assert [(c["user"]["login"], c["body"]) for c in gh.comments[1:]] == [
            (BOT, pr.read_text())]
        assert [m for m, *_ in gh.calls if m != "GET"] == ["POST", "PATCH"]


def test_refused_edit_posts_a_new_comment_and_a_refused_post_does_not_fail(
        pr, monkeypatch, capsys):
    with GitHubStub({"t-user": "eh-bot"}) as gh:
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        monkeypatch.setenv("GH_TOKEN", "t-user")
        gh.add("eh-bot", f"{MARKER}\nold report")
        gh.refuse.add("PATCH")
        assert _comment(pr) == 0
        assert [c["body"] for c in gh.comments] == [f"{MARKER}\nold report", pr.read_text()]
        gh.refuse.add("POST")  # a fork's read-only token: no comment, no failed step
        assert _comment(pr) == 0
        assert "::warning::no pull-request comment" in capsys.readouterr().out
        assert len(gh.comments) == 2
