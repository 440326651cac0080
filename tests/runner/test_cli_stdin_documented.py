"""Issue 37 friction: nothing outside a docstring said that a cli program receives
``execution.prompt`` on stdin. docs/config.md says it now; this test holds the docs and
the behaviour together (the prompt arrives on stdin; without one stdin is empty)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT, run_cli


def test_the_prompt_reaches_stdin_as_documented(tmp_path: Path) -> None:
    docs = " ".join((ROOT / "docs" / "config.md").read_text().split())
    assert "the program receives the rendered prompt" in docs and "standard input" in docs
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "a", "input": {"question": "two plus two"}}) + "\n")
    for prompt, expected in (('  prompt: "Q: {{ input.question }}"\n', "Q: two plus two"),
                             ("", "")):
        config = tmp_path / "eval.yaml"
        config.write_text(f"""\
name: stdin
matrix:
  factors:
    model: [m]
runner:
  type: cli
  command: python3 -c "import sys; print('[' + sys.stdin.read() + ']')"
execution:
  timeout: 30
{prompt}dataset:
  path: {cases}
judges:
  - name: echoed
    check: 'return outputs.get("output") == "[{expected}]", str(outputs.get("output"))'
""")
        out = tmp_path / ("out" + str(bool(prompt)))
        code, _, err = run_cli("--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                               "--output", str(out), "--force", "--no-judge-check")
        assert code == 0, err
        report = json.loads((out / "report.json").read_text())
        assert report["conditions"][0]["pass_rate"] == 1.0, expected
