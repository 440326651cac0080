"""The steps of the GitHub Action (``action.yml``), as a program a test can run locally.

``python -m eval_harness.ci.github run`` runs ``orchestrate`` (a full run with analysis; one
shard only with ``--shard``; or ``--analyze-only`` over downloaded runs), then writes

- the job summary: a status line and ``report.md``, appended to ``$GITHUB_STEP_SUMMARY``
  (``--summary``; default ``<output>/summary.md`` outside Actions);
- the PR comment body ``<output>/comment.md``: a hidden marker line
  ``<!-- factorial-eval-harness:<id> -->`` (so a rerun edits the same comment; the id is
  kept to letters, digits and ``._:/-``, so it can never close the comment early), the status
  line and the report (run data in it made inert: ``eval_harness._util.github_text``), cut to GitHub's comment size limit with a link to the run;
- ``exit-code=N`` to ``$GITHUB_OUTPUT``; it exits 0 itself, so the Action can post the
  comment and upload the artifacts before its last step fails the job on that code.

``python -m eval_harness.ci.github comment --body FILE`` posts the body on the pull request
of ``$GITHUB_EVENT_PATH`` through the REST API (``$GITHUB_API_URL``, token ``$GH_TOKEN`` or
``$GITHUB_TOKEN``), or edits the comment that carries the same marker **and was written by
the token's own identity** (``GET /user``; an Actions token, which cannot read it, is
``github-actions[bot]``): a comment anyone else wrote with our marker is never touched.
Where editing is refused (403/404/422) a new comment is posted; where posting is refused
too (a fork's read-only token) it warns and exits 0. Outside a pull request it does nothing. Options default to ``EH_*``
environment variables, which is how the Action passes its inputs (never interpolated into
shell text).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval_harness._util.child_env import child_env
from eval_harness._util.github_text import for_github, safe_marker_id

MARKER = "<!-- factorial-eval-harness:{id} -->"
#: GitHub rejects comment bodies over 65,536 characters
MAX_COMMENT = 65_000
STATUS = {0: "✅ passed", 1: "❌ gate failed (a threshold or regression, exit 1)",
          2: "⚠️ usage or configuration error (exit 2)",
          3: "⚠️ aborted on a quota/auth failure (exit 3)",
          4: "⚠️ nothing usable (exit 4)"}


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def orchestrate_argv(a: argparse.Namespace) -> list[str]:
    """The orchestrate command for the chosen mode."""
    argv = [sys.executable, "-m", "eval_harness.cli.main"]
    if a.shard:
        if not a.config:
            raise SystemExit("error: --shard needs --config (hint: set the action's config input)")
        argv += ["--config", a.config, "--runs-dir", a.runs_dir, "--shard", a.shard,
                 "--no-analysis"]
    elif a.analyze_only:
        argv += ["--analyze-only", a.analyze_only, "--output", a.output]
        argv += ["--config", a.config] if a.config else []
    else:
        if not a.config:
            raise SystemExit("error: --config is required (hint: set the action's config input)")
        argv += ["--config", a.config, "--runs-dir", a.runs_dir, "--output", a.output]
    if a.baseline and not a.shard:
        argv += ["--baseline", a.baseline, "--fail-on-regression"]
    return argv + shlex.split(a.extra_args)


def status_line(code: int) -> str:
    """The one-line outcome shown above the report."""
    return STATUS.get(code, f"⚠️ failed (exit {code})")


def run_url() -> str | None:
    """The Actions run page, when running under Actions."""
    server, repo, run = (_env("GITHUB_SERVER_URL"), _env("GITHUB_REPOSITORY"),
                         _env("GITHUB_RUN_ID"))
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def bodies(report: str | None, code: int, marker_id: str) -> tuple[str, str]:
    """(summary, comment) Markdown for a report and an exit code."""
    url = run_url()
    head = f"**factorial-eval-harness**: {status_line(code)}"
    if url:
        head += f" · [run and artifacts]({url})"
    # run data in the report never pings, autolinks or starts a workflow command
    text = (for_github(report) if report is not None
            else "_No report was written (see the job log)._\n")
    summary = f"{head}\n\n{text}"
    marker = MARKER.format(id=safe_marker_id(marker_id))
    comment = f"{marker}\n{summary}"
    if len(comment) > MAX_COMMENT:
        tail = ("\n\n… report cut to fit a comment; the full report.md is in the job summary "
                "and the artifacts" + (f": {url}" if url else "") + "\n")
        comment = comment[:MAX_COMMENT - len(tail)] + tail
    return summary, comment


def cmd_run(a: argparse.Namespace) -> int:
    """Run orchestrate, write the summary, the comment body and the exit code."""
    argv = orchestrate_argv(a)
    print(for_github("+ orchestrate " + shlex.join(argv[3:]), markdown=False), flush=True)
    code = relay(argv)
    out = Path(a.output)
    out.mkdir(parents=True, exist_ok=True)
    gh_out = a.github_output or _env("GITHUB_OUTPUT")
    if gh_out:
        with open(gh_out, "a", encoding="utf-8") as fh:
            fh.write(f"exit-code={code}\n")
    (out / "exit-code").write_text(f"{code}\n", encoding="utf-8")
    if a.shard:  # one shard of a fan-out: the analysis job reports
        print(f"shard {a.shard}: orchestrate exited {code}")
        return 0
    report_md = out / "report.md"
    report = report_md.read_text(encoding="utf-8") if report_md.is_file() else None
    summary, comment = bodies(report, code, a.marker or _marker_default(a))
    summary_path = a.summary or _env("GITHUB_STEP_SUMMARY") or str(out / "summary.md")
    with open(summary_path, "a", encoding="utf-8") as fh:
        fh.write(summary)
    (out / "comment.md").write_text(comment, encoding="utf-8")
    print(f"orchestrate exited {code}: {status_line(code)}; summary -> {summary_path}, "
          f"comment -> {out / 'comment.md'}")
    return 0


def relay(argv: list[str]) -> int:
    """Run ``argv`` and copy its output (stderr merged) to our stdout line by line, each
    through :func:`for_github` (``markdown=False``): a level name, a case id or an agent's
    message can never start a line the runner reads as a workflow command. Orchestrate and
    all it starts (agents, hooks, user code) never see the step files (``child_env``)."""
    proc = subprocess.Popen(argv, env=child_env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out = sys.stdout
    try:
        for raw in proc.stdout:
            out.write(for_github(raw.decode("utf-8", "replace"), markdown=False))
            out.flush()
    finally:
        proc.stdout.close()
    return proc.wait()


def _marker_default(a: argparse.Namespace) -> str:
    return Path(a.config).stem if a.config else Path(a.analyze_only or "eval").name


#: who an Actions token (GITHUB_TOKEN) comments as; it cannot read ``GET /user``
ACTIONS_BOT = "github-actions[bot]"


class ApiError(Exception):
    """A GitHub API call that failed (``status`` None: no HTTP answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # the token stays here
        return None


def _api(method: str, path: str, payload: Any = None) -> Any:
    """One REST call (JSON in and out) with the job's token; redirects are refused."""
    base = (_env("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    token = _env("GH_TOKEN") or _env("GITHUB_TOKEN")
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
               "User-Agent": "factorial-eval-harness"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if payload is not None:
        data = json.dumps(payload).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=60) as reply:
            text = reply.read(32 * 1024 * 1024).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        raise ApiError(f"{method} {path}: HTTP {exc.code}", exc.code) from None
    except (OSError, ValueError) as exc:
        raise ApiError(f"{method} {path}: {type(exc).__name__}") from None
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        raise ApiError(f"{method} {path}: the reply is not JSON") from None


def token_login() -> str | None:
    """The login the token comments as: ``GET /user``; an Actions token (403 there, under
    ``GITHUB_ACTIONS=true``) is ``github-actions[bot]``; None when unknown."""
    try:
        user = _api("GET", "/user")
    except ApiError as exc:
        if exc.status in (401, 403) and _env("GITHUB_ACTIONS") == "true":
            return ACTIONS_BOT
        return None
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else None


def own_comment(repo: str, pr: int, marker: str, login: str) -> int | None:
    """The id of the first comment on ``repo#pr`` that starts with ``marker`` and was
    written by ``login`` (every page read)."""
    for page in range(1, 101):
        found = _api("GET", f"/repos/{repo}/issues/{pr}/comments?per_page=100&page={page}")
        if not isinstance(found, list):
            return None
        for c in found:
            user = c.get("user") if isinstance(c, dict) else None
            body = c.get("body") if isinstance(c, dict) else None
            if (isinstance(user, dict) and user.get("login") == login and isinstance(body, str)
                    and body.startswith(marker) and isinstance(c.get("id"), int)):
                return int(c["id"])
        if len(found) < 100:
            return None
    return None


def pull_request_number(event_path: str) -> int | None:
    """The pull request of the triggering event, or None (push, schedule...)."""
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    number = pr.get("number") if isinstance(pr, dict) else None
    return number if isinstance(number, int) else None


def cmd_comment(a: argparse.Namespace) -> int:
    """Edit our own comment carrying the marker, or create one (module doc)."""
    body = Path(a.body).read_text(encoding="utf-8")
    marker = body.splitlines()[0] if body.startswith("<!--") else None
    repo = a.repo or _env("GITHUB_REPOSITORY")
    pr = a.pr or pull_request_number(_env("GITHUB_EVENT_PATH"))
    if pr is None or not repo:
        print("not a pull request: no comment posted")
        return 0
    try:
        login = token_login() if marker else None
        cid = own_comment(repo, pr, marker, login) if marker and login else None
        if cid is not None:
            try:
                _api("PATCH", f"/repos/{repo}/issues/comments/{cid}", {"body": body})
                print(f"updated comment {cid} on {repo}#{pr}")
                return 0
            except ApiError as exc:
                if exc.status not in (403, 404, 422):
                    raise
                print(f"cannot edit comment {cid} ({exc}): posting a new one")
        try:
            _api("POST", f"/repos/{repo}/issues/{pr}/comments", {"body": body})
        except ApiError as exc:
            if exc.status not in (401, 403, 404):
                raise
            detail = for_github(" ".join(f"{repo}#{pr} ({exc})".split()), markdown=False)
            print(f"::warning::no pull-request comment: the token may not comment on "
                  f"{detail}; the report is in the job summary")
            return 0
        print(f"commented on {repo}#{pr}")
    except ApiError as exc:
        raise SystemExit(f"error: GitHub API: {exc}") from None
    return 0


def parser() -> argparse.ArgumentParser:
    """Arguments (defaults from the EH_* variables the Action sets)."""
    p = argparse.ArgumentParser(prog="python -m eval_harness.ci.github")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run orchestrate; write summary, comment body, exit code")
    r.add_argument("--config", default=_env("EH_CONFIG"))
    r.add_argument("--baseline", default=_env("EH_BASELINE"))
    r.add_argument("--shard", default=_env("EH_SHARD"), help="K/N or auto: run one shard only")
    r.add_argument("--analyze-only", default=_env("EH_ANALYZE_ONLY"), metavar="DIR")
    r.add_argument("--runs-dir", default=_env("EH_RUNS_DIR", "runs"))
    r.add_argument("--output", default=_env("EH_OUTPUT", "eval-report"))
    r.add_argument("--extra-args", default=_env("EH_EXTRA_ARGS"))
    r.add_argument("--marker", default=_env("EH_COMMENT_ID"), help="comment marker id")
    r.add_argument("--summary", default="", help="file to append the summary to")
    r.add_argument("--github-output", default="", help="file for step outputs")
    c = sub.add_parser("comment", help="post or update the PR comment (GitHub REST API)")
    c.add_argument("--body", default=os.path.join(_env("EH_OUTPUT", "eval-report"), "comment.md"))
    c.add_argument("--repo", default="")
    c.add_argument("--pr", type=int, default=None)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    a = parser().parse_args(argv)
    return cmd_run(a) if a.command == "run" else cmd_comment(a)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
