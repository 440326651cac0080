"""The published package: a wheel built with ``python -m build`` installs into a fresh venv
in a temporary directory and runs ``orchestrate init demo && orchestrate --config
demo/eval.yaml`` from outside the repository.

Kept affordable for every CI run (~30 s): the wheel goes in with ``--no-deps`` and the
fresh venv sees the test environment's already-installed dependencies through a ``.pth``
line (not the repository checkout: the package itself comes from the wheel, which the
test checks), with ``ryaml`` hidden, as on a platform without its wheel (it is the
optional ``fast`` extra).

.ci/run also runs this file from a venv holding only the built wheel and its required
dependencies (``EVAL_HARNESS_WHEEL`` names that wheel, so it is not rebuilt).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import eval_harness
from eval_harness.starter import TEMPLATE_FILES

#: the repository the package metadata and the README's absolute links point at
REPO_URL = "https://github.com/factorial-eval-harness/factorial-eval-harness"

ROOT = Path(__file__).resolve().parent.parent


def _run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_pyproject_has_one_version_source_and_a_license() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and not re.search(r"^version\s*=\s*\"", text, re.M)
    assert 'license = "Apache-2.0"' in text
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    assert re.search(r'^name = "factorial-eval-harness"$', text, re.M)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the sources (the checkout is left untouched), or the
    one CI built already (``EVAL_HARNESS_WHEEL``)."""
    if os.environ.get("EVAL_HARNESS_WHEEL"):
        return Path(os.environ["EVAL_HARNESS_WHEEL"])
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "eval_harness", src / "eval_harness",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)], cwd=src)
    (found,) = out.glob("*.whl")
    return found


def test_wheel_contents(wheel: Path) -> None:
    assert wheel.name == f"factorial_eval_harness-{eval_harness.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(f"factorial_eval_harness-{eval_harness.__version__}.dist-info/METADATA")
    for name in TEMPLATE_FILES:
        assert f"eval_harness/starter/template/{name}" in names
    assert "eval_harness/analysis/schema/anova.schema.json" in names
    assert "eval_harness/py.typed" in names
    for name in ("templates/base.html", "templates/case.html", "static/app.js",
                 "static/app.css", "static/favicon.svg"):  # `orchestrate serve` (issue 24)
        assert f"eval_harness/serve/{name}" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    text = meta.decode()
    assert f"Version: {eval_harness.__version__}" in text
    assert "License-Expression: Apache-2.0" in text
    assert f"Project-URL: Repository, {REPO_URL}" in text
    assert "Classifier: Programming Language :: Python :: 3" in text
    assert "Keywords:" in text
    requires = [line for line in text.splitlines() if line.startswith("Requires-Dist:")]
    assert [r for r in requires if "ryaml" in r] == ['Requires-Dist: ryaml>=0.5; extra == "fast"']
    assert any('pyarrow' in r and 'extra == "parquet"' in r for r in requires)
    assert not any(n.startswith("tests/") for n in names)


def test_wheel_installs_and_runs_the_starter_outside_the_repo(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    py = venv / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp_path).stdout.strip())
    # the test environment's dependencies (pandas, scipy, ...), but not its eval_harness: an
    # editable install's finder lives in a .pth of that folder, which is not processed here
    deps = sysconfig.get_paths()["purelib"]
    # `import ryaml` raises ImportError in the new venv, as where no ryaml wheel exists
    (site / "zz_test_deps.pth").write_text(
        deps + "\nimport sys; sys.modules['ryaml'] = None\n")
    # --ignore-installed: where the test environment holds the wheel already (.ci/run)
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
          "--ignore-installed",
          "--no-index", str(wheel)], cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    orchestrate = venv / "bin" / "orchestrate"
    where = _run([str(py), "-c", "import eval_harness; print(eval_harness.__file__)"], cwd=work)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel, not the repo
    no_fast = _run([str(py), "-c", "from eval_harness.config import yamlfast; "
                    "print(yamlfast._ryaml)"], cwd=work)
    assert no_fast.stdout.strip() == "None"  # the PyYAML path below
    usage = _run([str(orchestrate), "--help"], cwd=work)
    assert usage.stdout.startswith("usage: orchestrate ["), usage.stdout[:80]
    _run([str(orchestrate), "init", "demo"], cwd=work)
    proc = _run([str(orchestrate), "--config", "demo/eval.yaml"], cwd=work)
    assert "wrote analysis/starter/anova.json" in proc.stdout
    for name in ("anova.json", "comparisons.json", "report.md", "report.html"):
        assert (work / "analysis" / "starter" / name).stat().st_size > 0
    assert len(list((work / "runs" / "starter").glob("*/cases/*/record.json"))) == 40
    shown = _run([str(orchestrate), "show", "runs/starter", "--case", "add-01"], cwd=work)
    assert "case add-01: 4 sample(s)" in shown.stdout


def test_readme_links_and_images_are_absolute() -> None:
    """The README is the PyPI page: a relative link or image breaks there."""
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", text) + re.findall(
        r'<img[^>]+src="([^"]+)"', text)
    assert targets
    for target in targets:
        assert target.startswith(("https://", "http://", "#")), target
        if target.startswith(REPO_URL):
            rest = target[len(REPO_URL):].split("#")[0]
            kind, branch, path = [*rest.lstrip("/").split("/", 2), "", "", ""][:3]
            assert kind in ("blob", "raw", "tree") and branch == "main", target
            assert (ROOT / path).exists(), f"{target}: no {path} in the repository"
    assert f"{REPO_URL}/raw/main/docs/img/report.png" in text


def test_program_names_itself_as_invoked() -> None:
    from eval_harness.cli.args import build_parser
    from eval_harness.cli.prog import prog

    assert prog("/venv/bin/orchestrate") == "orchestrate"
    assert prog("orchestrate.py") == "orchestrate.py"
    assert prog("/usr/lib/python3/site-packages/pytest/__main__.py") == "orchestrate"
    assert build_parser().prog in ("orchestrate", "orchestrate.py")
    script = _run([sys.executable, str(ROOT / "orchestrate.py"), "--help"], cwd=ROOT)
    assert script.stdout.startswith("usage: orchestrate.py ["), script.stdout[:80]
