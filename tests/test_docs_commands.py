"""Every shell snippet in README.md and docs/*.md runs as written.

A snippet is a fenced block marked ``bash``, ``sh`` or ``shell`` (synopses with
placeholders live in unmarked blocks and are not run). Blocks run in document order with
``bash -euo pipefail`` in one scratch folder laid out like a clone: ``configs/`` (the
bundled example, its dataset cut to its first 4 cases to keep the cost down),
``orchestrate.py``, ``.venv`` (a link to the environment running this test) and, for the
docs' generic ``eval.yaml``, the starter eval of ``orchestrate init``. README
blocks run with that venv NOT on PATH (the tour says ``.venv/bin/orchestrate``); docs
blocks run with it on PATH, as if activated, which is what those pages say they assume.

Rewrites and skips are explicit, each with its reason (REWRITES, SKIPS); a snippet that
matches neither and fails, fails this test. docs/example_notebook.py (the notebook-style
API example) runs too, against the same runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(bash|sh|shell)\n(.*?)^```", re.M | re.S)
EXAMPLE_CASES = 4

#: (text, replacement, reason)
REWRITES = [
    ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && ", "",
     "the environment already exists (this test runs in it); .ci/run performs exactly this "
     "step from scratch on every CI run"),
    ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && ", "",
     "the environment already exists (this test runs in it); .ci/run installs '.[test]' "
     "from scratch on every CI run"),
]
#: command text -> reason it is not run here
SKIPS = {
    ".venv/bin/python -m pytest": "it is the test suite this test belongs to (CI runs it: .ci/run)",
}


#: programs a snippet may use that a fresh machine may lack: skipped locally, required in CI
NEEDS = {"jq": "jq is not installed (apt-get install jq; .ci/run installs it)"}


@dataclass
class Snippet:
    page: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def snippets() -> list[Snippet]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            out.append(Snippet(page, text[:m.start()].count("\n") + 1, m.group(2)))
    return out


def prepare(text: str) -> tuple[str, list[str]]:
    """The script to run, and what was skipped (with reasons)."""
    for old, new, _reason in REWRITES:
        text = text.replace(old, new)
    kept, skipped = [], []
    for line in text.splitlines():
        command = line.split("  #")[0].strip()
        program = command.split(" ", 1)[0]
        if command in SKIPS:
            skipped.append(f"{command}: {SKIPS[command]}")
        elif program in NEEDS and shutil.which(program) is None:
            if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
                pytest.fail(f"{program} is not installed; .ci/run installs it")
            skipped.append(f"{program} ...: {NEEDS[program]}")
        else:
            kept.append(line)
    return "\n".join(kept) + "\n", skipped


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "configs", root / "configs")
    cases = (ROOT / "configs" / "example" / "cases.jsonl").read_text().splitlines()
    (root / "configs" / "example" / "cases.jsonl").write_text(
        "\n".join(cases[:EXAMPLE_CASES]) + "\n")
    shutil.copy2(ROOT / "orchestrate.py", root / "orchestrate.py")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    # the docs' generic `eval.yaml` (your eval) is the starter that `orchestrate init` writes
    from eval_harness.starter import scaffold

    scaffold(root)
    return root


def _env(activated: bool, scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    venv_bin = str(Path(sys.prefix) / "bin")
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    env["PATH"] = os.pathsep.join([venv_bin, *path] if activated else path)
    env["SCRATCH"] = str(scratch)  # docs/ci-fanout.md's SLURM script writes there
    env.update(SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_TASK_COUNT="8")
    env.pop("CI", None)
    return env


def test_rewrites_and_skips_still_match_the_docs() -> None:
    """A rewrite or skip that no longer matches anything would hide a changed command."""
    texts = [s.text for s in snippets()]
    for old, _new, _reason in REWRITES:
        assert any(old in t for t in texts), old
    for command in SKIPS:
        assert any(command in t for t in texts), command


def test_every_shell_snippet_runs(workspace: Path, tmp_path: Path) -> None:
    """Run each snippet in order; all must exit 0."""
    found = snippets()
    assert any(s.page.name == "README.md" for s in found)
    skipped: list[str] = []
    ran = 0
    for snip in found:
        script, skips = prepare(snip.text)
        skipped += [f"{snip.where}: {s}" for s in skips]
        if not script.strip():
            continue
        activated = snip.page.name != "README.md"
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=workspace,
                              env=_env(activated, tmp_path), capture_output=True, text=True,
                              timeout=600, check=False)
        assert proc.returncode == 0, (
            f"{snip.where} exited {proc.returncode}:\n{script}\n--- stdout\n"
            f"{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
        ran += 1
    assert ran >= 3
    expected = [f"{c}: {r}" for c, r in SKIPS.items()]
    if shutil.which("jq") is None:
        expected.append(f"jq ...: {NEEDS['jq']}")
    assert sorted(x.split(": ", 1)[1] for x in skipped) == sorted(expected), skipped
    # what the README promises exists afterwards
    for name in ("anova.json", "comparisons.json", "report.md", "report.html"):
        assert (workspace / "analysis" / "example" / name).is_file()
    assert (workspace / "baseline.json").is_file() and (workspace / "eval.schema.json").is_file()
    assert (workspace / "my-eval" / "eval.yaml").is_file()
    # the notebook-style API example, against the same runs
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "example_notebook.py")],
                          cwd=workspace, env=_env(True, tmp_path), capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "terms:" in proc.stdout and "contrasts:" in proc.stdout


def test_relative_links_resolve() -> None:
    """Every relative link in README.md and docs/*.md names a file that exists (and an
    anchor that is one of the target page's headings)."""
    link = re.compile(r"\]\(([^)\s]+)\)")
    bad = []
    for page in PAGES:
        for target in link.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and file.suffix == ".md":
                heads = re.findall(r"^#+ (.*)$", file.read_text(encoding="utf-8"), re.M)
                slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
                         for h in heads}
                if anchor not in slugs:
                    bad.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
        # a repository page named in backticks (`notes/X.md`) must exist too
        for name in re.findall(r"`([\w.-]+(?:/[\w.-]+)+\.md)`", page.read_text(encoding="utf-8")):
            if not (ROOT / name).exists() and not (page.parent / name).exists():
                bad.append(f"{page.relative_to(ROOT)}: `{name}`")
    assert not bad, bad


def test_no_merge_conflict_markers() -> None:
    """A merge that left `<<<<<<<` / `>>>>>>>` lines behind breaks docs and code alike."""
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
    files = [*PAGES, *ROOT.glob("eval_harness/**/*.py"), *ROOT.glob("tests/**/*.py"),
             *ROOT.glob("configs/**/*.yaml"), ROOT / "pyproject.toml", ROOT / ".ci" / "run"]
    bad = [str(f.relative_to(ROOT)) for f in files
           if f.is_file() and marker.search(f.read_text(encoding="utf-8", errors="replace"))]
    assert not bad, bad
