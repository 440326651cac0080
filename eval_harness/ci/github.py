"""The steps of the GitHub Action (``action.yml``), as a program a test can run locally.

``python -m eval_harness.ci.github run`` runs ``orchestrate`` (a full run with analysis; one
shard only with ``--shard``; or ``--analyze-only`` over downloaded runs), then writes

- the job summary: a status line and ``report.md``, appended to ``$GITHUB_STEP_SUMMARY``
  (``--summary``; default ``<output>/summary.md`` outside Actions);
- the PR comment body ``<output>/comment.md``: a hidden marker line
  ``<!-- factorial-eval-harness:<id> -->`` (so a rerun edits the same comment), the status
  line and the report, cut to GitHub's comment size limit with a link to the run;
- ``exit-code=N`` to ``$GITHUB_OUTPUT``; it exits 0 itself, so the Action can post the
  comment and upload the artifacts before its last step fails the job on that code.

``python -m eval_harness.ci.github comment --body FILE`` posts the body on the pull request
of ``$GITHUB_EVENT_PATH`` with ``gh api``, or edits the comment that already carries the
same marker. Outside a pull request it does nothing. Options default to ``EH_*``
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
from collections.abc import Sequence
from pathlib import Path

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
    text = report if report is not None else "_No report was written (see the job log)._\n"
    summary = f"{head}\n\n{text}"
    marker = MARKER.format(id=marker_id)
    comment = f"{marker}\n{summary}"
    if len(comment) > MAX_COMMENT:
        tail = ("\n\n… report cut to fit a comment; the full report.md is in the job summary "
                "and the artifacts" + (f": {url}" if url else "") + "\n")
        comment = comment[:MAX_COMMENT - len(tail)] + tail
    return summary, comment


def cmd_run(a: argparse.Namespace) -> int:
    """Run orchestrate, write the summary, the comment body and the exit code."""
    argv = orchestrate_argv(a)
    print("+ orchestrate " + shlex.join(argv[3:]), flush=True)
    code = subprocess.run(argv, check=False).returncode
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


def _marker_default(a: argparse.Namespace) -> str:
    return Path(a.config).stem if a.config else Path(a.analyze_only or "eval").name


def _gh(args: Sequence[str]) -> str:
    done = subprocess.run(["gh", *args], check=False, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"error: gh {' '.join(args[:3])} failed: {done.stderr.strip()[:300]}")
    return done.stdout


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
    """Create the PR comment, or edit the one carrying the same marker."""
    body = Path(a.body).read_text(encoding="utf-8")
    marker = body.splitlines()[0] if body.startswith("<!--") else None
    repo = a.repo or _env("GITHUB_REPOSITORY")
    pr = a.pr or pull_request_number(_env("GITHUB_EVENT_PATH"))
    if pr is None or not repo:
        print("not a pull request: no comment posted")
        return 0
    ids: list[str] = []
    if marker:
        query = f".[] | select(.body | startswith({json.dumps(marker)})) | .id"
        ids = _gh(["api", "--paginate", f"repos/{repo}/issues/{pr}/comments",
                   "--jq", query]).split()
    if ids:
        _gh(["api", "-X", "PATCH", f"repos/{repo}/issues/comments/{ids[0]}",
             "-F", f"body=@{a.body}"])
        print(f"updated comment {ids[0]} on {repo}#{pr}")
    else:
        _gh(["api", "-X", "POST", f"repos/{repo}/issues/{pr}/comments", "-F", f"body=@{a.body}"])
        print(f"commented on {repo}#{pr}")
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
    c = sub.add_parser("comment", help="post or update the PR comment (gh api)")
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
