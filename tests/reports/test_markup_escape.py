"""User strings (levels, factor and judge names, eval names) are text, never rich markup:
a level named `[/oops]` used to crash --dry-run and the console report, and `[link=…]`
became a hyperlink."""
from __future__ import annotations

import io
from pathlib import Path

import yaml
from rich.console import Console

from eval_harness.reports.dry_run_view import render_dry_run
from tests.analysis.rundir_writer import write_native
from tests.conftest import run_cli

LEVELS = ["[/oops]", "[link=http://evil.example]x[/link]"]


def _summary() -> dict:
    return {"eval": "[bold]e", "n_conditions": 2, "n_cases": 1, "replications": 1,
            "total_runs": 2, "judge_calls": 0, "factors": {"[red]f": LEVELS},
            "conditions": [{"condition_id": f"id{i}", "levels": {"[red]f": lv}, "runs": 1}
                           for i, lv in enumerate(LEVELS)],
            "estimate": {"cost_kind": "unknown"},
            "warnings": ["factor `[/x]` is consumed by nothing"]}


def test_dry_run_view_prints_markup_like_levels_verbatim() -> None:
    buf = io.StringIO()
    render_dry_run(_summary(), Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    for needle in (*LEVELS, "[bold]e", "[red]f", "[/x]"):
        assert needle in text


def test_dry_run_cli_with_a_markup_level(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([{"id": "c1", "input": {"q": "x"}}]))
    cfg = {"name": "m", "matrix": {"factors": {"model": LEVELS}},
           "runner": {"type": "cli", "command": "/bin/echo {model}"},
           "dataset": {"path": "cases.yaml"}}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(cfg))
    code, out, err = run_cli("--config", str(tmp_path / "eval.yaml"), "--dry-run")
    assert code == 0, err
    assert "[/oops]" in out and "[link=http://evil.example]x[/link]" in out


def test_console_report_with_markup_levels_and_judge_names(tmp_path: Path) -> None:
    data = {(lv,): {f"c{i}": [{"[/j]": bool((i + k) % 2)}] for i in range(4)}
            for k, lv in enumerate(LEVELS)}
    write_native(tmp_path / "runs", data, ["[b]model"])
    code, out, err = run_cli("--analyze-only", str(tmp_path / "runs"), "--output",
                             str(tmp_path / "out"))
    assert code == 0, err
    assert "[/oops]" in out and "[link=http://evil.example]x[/link]" in out
