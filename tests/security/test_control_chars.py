"""Agent output and run data reach the console and report.md: ANSI escape sequences,
bidi overrides and zero-width characters must arrive made visible, never raw."""

from __future__ import annotations

import json
import re
from pathlib import Path

from eval_harness._util.safe_text import safe_text
from tests.conftest import run_cli

from ..analysis.rundir_writer import write_native

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
LEVELS = ["a\x1b[2J\x1b]0;pwned\x07", "b\u202eevil\u202c"]


def test_console_and_report_md_show_no_raw_control_characters(tmp_path: Path) -> None:
    data = {(lvl,): {f"c\u200b{i}": [{"ok": bool((i + j) % 3)}] for i in range(5)}
            for j, lvl in enumerate(LEVELS)}
    data[(LEVELS[0],)]["c\u200b0"] = [None]  # one errored sample with a hostile reason
    runs = write_native(tmp_path / "runs", data, ["model"], eval_name="demo")
    for rec_path in (tmp_path / "runs").rglob("record.json"):
        rec = json.loads(rec_path.read_text())
        if rec["status"] == "errored":
            rec["reason"] = "boom \x1b[31mred\x1b[0m \u202eerised"
            rec_path.write_text(json.dumps(rec))
    assert runs
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                                   str(out))
    assert code in (0, 1), stderr
    md = (out / "report.md").read_text()
    assert "␛[2J" in stdout + md  # shown, made visible
    for name, text in (("stdout", stdout), ("stderr", stderr), ("report.md", md)):
        found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
        assert not found, f"{name} holds raw {found}"


def test_safe_text_keeps_ordinary_text_and_shows_the_rest() -> None:
    assert safe_text("héllo\tworld\n→ ok") == "héllo\tworld\n→ ok"
    assert safe_text("\x1b[31m") == "␛[31m"
    assert safe_text("a\u202eb\u200bc") == "a<U+202E>b<U+200B>c"
    assert safe_text("x\ny", newlines=False) == "x␊y"
