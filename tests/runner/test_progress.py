"""Progress: plain lines off a terminal, a rich bar on one; both on the given stream only."""

from __future__ import annotations

import io

import pytest

from eval_harness.runner import progress as progress_mod
from eval_harness.runner.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_when_not_a_terminal(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress_mod, "PLAIN_EVERY_S", 0.0)  # a line per cell
    stream = io.StringIO()
    p = Progress(3, stream=stream)
    assert p.mode == "plain"
    p.advance(errored=False, cost=0.25)
    p.advance(errored=True, cost=None)  # an unknown cost adds nothing
    p.advance(errored=False, cost=0.5)
    p.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4  # three periodic lines and the final one
    assert lines[0].startswith("[eval] 1/3 cells, 0 errored, $0.25 spent") and "ETA" in lines[0]
    assert lines[1].startswith("[eval] 2/3 cells, 1 errored, $0.25 spent")
    assert lines[-1].startswith("[eval] 3/3 cells, 1 errored, $0.75 spent")
    assert "ETA" not in lines[-1]  # nothing left
    assert capsys.readouterr().out == ""


def test_plain_lines_are_throttled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_mod, "PLAIN_EVERY_S", 3600.0)
    stream = io.StringIO()
    p = Progress(50, stream=stream)
    for _ in range(50):
        p.advance(errored=False, cost=None)
    p.close()
    assert stream.getvalue().splitlines() == [p.line()]  # only the final line


def test_rich_bar_on_a_terminal_writes_to_its_stream(capsys: pytest.CaptureFixture[str]) -> None:
    stream = _Tty()
    p = Progress(2, stream=stream, label="cells")
    assert p.mode == "rich"
    p.advance(errored=True, cost=1.5)
    p.advance(errored=False, cost=None)
    p.close()
    text = stream.getvalue()
    assert "2/2" in text and "errored 1" in text and "$1.50" in text
    assert capsys.readouterr().out == ""  # reports own stdout


def test_off_writes_nothing() -> None:
    stream = io.StringIO()
    p = Progress(2, mode="off", stream=stream)
    p.advance(errored=False, cost=1.0)
    p.close()
    assert stream.getvalue() == "" and p.done == 1 and p.spend == 1.0
