"""Shared test helpers."""

from __future__ import annotations

import atexit
import contextlib
import io
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import eval_harness.app  # noqa: F401  (registers the dialects and run formats, as for every door)
from eval_harness._util import redact
from eval_harness.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
_FIXTURES_SOURCE = Path(__file__).resolve().parent / "fixtures"


def _fixtures_copy() -> Path:
    """A per-session copy of tests/fixtures (about 1 MB). Analysing agent-eval-harness-layout
    runs writes anova.json beside them, as AEH does, so tests that analyse the fixture runs
    in place must never write into the checkout."""
    root = Path(tempfile.mkdtemp(prefix="eval-harness-fixtures-"))
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(_FIXTURES_SOURCE, root / "fixtures", symlinks=True)
    return root / "fixtures"


FIXTURES = _fixtures_copy()
sys.path.insert(0, str(FIXTURES))
from billing_stub import BillingStub  # noqa: E402


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def example_cli_config(path: Path, *, name: str, models: list[str], seed: int, judge: str) -> Path:
    """Write an eval.yaml at `path` that runs the bundled example agent as a cli runner
    over the example's cases, one factor `model` with `models`, the agent seeded with
    `seed`, and one judge `ok` whose kind line is `judge` (e.g. ``exact_match: true``)."""
    agent = ROOT / "configs" / "example" / "agent.py"
    path.write_text(f"""\
name: {name}
matrix:
  factors:
    model: [{", ".join(models)}]
runner:
  type: cli
  command: python3 -S {agent} --model {{model}} --case-id {{case_id}} --question {{question}}
  output_format: json
execution:
  env: {{EXAMPLE_AGENT_SEED: "{seed}"}}
dataset:
  path: {ROOT / "configs" / "example" / "cases.jsonl"}
judges:
  - name: ok
    {judge}
""")
    return path


@pytest.fixture(autouse=True)
def _forget_secrets():
    """Secrets registered by one test (eval_harness._util.redact is process-wide) never mask
    another test's output."""
    yield
    redact.clear()


@pytest.fixture(scope="session")
def _session_mpl_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """matplotlib's config / font cache for the whole session (built once, never in HOME)."""
    return tmp_path_factory.mktemp("mplconfig")


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                  _session_mpl_dir: Path) -> Path:
    """Every test gets its own HOME and XDG directories (issue 37: a test run once left stub
    entries in the user's ~/.cache/eval_harness/calls.sqlite3): a test that drops
    EVAL_HARNESS_CACHE_DIR, or a child process that builds its own environment from HOME,
    still never reaches the user's files."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
                     ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("MPLCONFIGDIR", str(_session_mpl_dir))
    return home


@pytest.fixture(autouse=True)
def _private_call_cache(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch, _private_home: Path) -> Path:
    """Every test gets its own empty model-call cache (never the user's ~/.cache): a
    cached reply from one test cannot silence another test's stub."""
    path = tmp_path_factory.mktemp("call-cache")
    monkeypatch.setenv("EVAL_HARNESS_CACHE_DIR", str(path))
    monkeypatch.delenv("EVAL_HARNESS_CACHE", raising=False)
    return path


@pytest.fixture
def billing(monkeypatch: pytest.MonkeyPatch) -> Iterator[BillingStub]:
    """A running billing stub; the judges' endpoints point at it."""
    with BillingStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-key-abcdef")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-judge-key-abcdef")
        yield server


@pytest.fixture
def cli():
    """The in-process CLI runner."""
    return run_cli


@pytest.fixture(scope="session")
def starter_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The starter eval (``orchestrate init``) run once: returns runs/starter/ (40 runs'
    worth of cases, no analysis). Read-only for the tests that share it."""
    root = tmp_path_factory.mktemp("starter")
    code, _, err = run_cli("init", str(root / "demo"))
    assert code == 0, err
    code, _, err = run_cli("--config", str(root / "demo" / "eval.yaml"), "--runs-dir",
                           str(root / "runs"), "--no-analysis", "--concurrency", "4")
    assert code == 0, err
    return root / "runs" / "starter"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run @pytest.mark.slow statistical simulations (minutes)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long seeded simulation; run with --run-slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow simulation: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
