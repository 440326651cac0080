"""Issue 34's GitHub-output attacks: run data reaching the job log, the job summary and the
pull-request comment through ``python -m eval_harness.ci.github run`` (a hostile pull
request names the levels). Nothing may ping, autolink, start a workflow command or end the
marker comment early."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from eval_harness._util.github_text import for_github
from eval_harness.ci import github
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from rundir_writer import write_native

#: the console wraps long text at blanks: any wrap inside the last name starts a line "::"
LEVELS = ("@octocat", "@acme/security-team", " ".join(["::add-mask::pwned"] * 12),
          "https://evil.example/x www.evil.example", "see ##[error]planted")
PING = re.compile(r"(?<![\w`])@[A-Za-z0-9][\w-]*")
AUTOLINK = re.compile(r"\b(https?://|www\.)", re.IGNORECASE)


def _github_run(tmp: Path, marker: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    data = {(lv,): {f"c{i}": [{"q": 0.2 + 0.1 * (i % 5) + 0.05 * k, "ok": i % 2 == 0}]
                    for i in range(8)} for k, lv in enumerate(LEVELS)}
    write_native(tmp / "runs", data, ["model"], ranges={"q": [0, 1]})
    out = tmp / "out"
    done = subprocess.run(
        [sys.executable, "-m", "eval_harness.ci.github", "run", "--analyze-only",
         str(tmp / "runs"), "--output", str(out), "--marker", marker,
         "--summary", str(tmp / "summary.md"), "--github-output", str(tmp / "gh-out")],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and (out / "comment.md").is_file(), done.stdout + done.stderr
    return done, out


def test_a_comment_id_with_an_html_comment_end_cannot_end_the_marker_early(
        tmp_path: Path) -> None:
    _, out = _github_run(tmp_path, "x --> <img src=x onerror=alert(1)> @octocat\n::x")
    first = (out / "comment.md").read_text(encoding="utf-8").splitlines()[0]
    assert re.fullmatch(r"<!-- factorial-eval-harness:[A-Za-z0-9._:/-]+ -->", first), first
    assert first.count("-->") == 1 and "--" not in first[4:-3]
    # and a rerun with the same id finds it again (the marker is stable)
    assert github.bodies("", 0, "x --> <img src=x onerror=alert(1)> @octocat\n::x")[1] \
        .splitlines()[0] == first


def test_mentions_and_bare_urls_in_level_names_never_ping_or_link(tmp_path: Path) -> None:
    _, out = _github_run(tmp_path, "eval")
    for body in ((out / "comment.md").read_text(encoding="utf-8"),
                 (tmp_path / "summary.md").read_text(encoding="utf-8"),
                 (out / "report.md").read_text(encoding="utf-8")):
        assert "octocat" in body and "security" in body  # still shown...
        assert not PING.findall(body)  # ...as ＠octocat: no ping
        own = "[run and artifacts]("  # our own link to the run is ours, not run data
        assert not AUTOLINK.findall(body.split(own)[-1] if own in body else body)


def test_a_level_name_never_starts_a_workflow_command_in_the_job_log(tmp_path: Path) -> None:
    done, _ = _github_run(tmp_path, "eval")
    assert "add-mask" in done.stdout + done.stderr  # the name is printed...
    for line in (done.stdout + done.stderr).splitlines():  # ...but never as a command
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


def test_the_one_function_is_idempotent_and_keeps_lines() -> None:
    text = "::a\n  ::b @c https://d www.e ##[f]\nplain"
    once = for_github(text)
    assert for_github(once) == once and once.count("\n") == text.count("\n")
    assert for_github("a::b", markdown=False) == "a::b"  # only a line's start is a command
