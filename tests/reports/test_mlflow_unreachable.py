"""Issue 34 (minor): an MLflow tracking server that is down, named by a URI with a password
in it: the password is never printed (URLs with credentials are masked by the one
function, eval_harness._util.redact.mask_url_credentials, on every stream the CLI writes),
and the run is a clear one-line exit 2, not an internal error (70)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.reports.test_mlflow_log import _project

PASSWORD = "hunter2-mlflow-Pa55word"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_tracking_server_is_exit_2_and_never_prints_its_password(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _project(tmp_path, tmp_path / "store")
    config.write_text("\n".join(ln for ln in config.read_text().splitlines()
                                if "tracking_uri" not in ln) + "\n")
    uri = f"http://alice:{PASSWORD}@127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    code, out, err = run_cli("--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                             "--output", str(tmp_path / "out"), "--no-judge-check")
    assert PASSWORD not in out + err
    assert code == 2, err
    [line] = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert "mlflow" in line and "127.0.0.1" in line and "hint:" in line, err
    assert (tmp_path / "out" / "anova.json").is_file()  # the analysis itself is kept


@pytest.mark.parametrize(("text", "want"), [
    ("to http://alice:pw-123@host:5000/x now", "to http://alice:***@host:5000/x now"),
    ("https://ghp_tokenvalue123@github.com/a", "https://***@github.com/a"),
    ("db postgresql://u:p%40ss@db/x?sslmode=require", "db postgresql://u:***@db/x?sslmode=require"),
    ("https://h/x?api_key=abc123&page=2", "https://h/x?api_key=***&page=2"),
    ("no url user@example.com here", "no url user@example.com here")])
def test_urls_with_credentials_are_masked(text: str, want: str) -> None:
    from eval_harness._util.redact import mask_url_credentials

    assert mask_url_credentials(text) == want
