"""Traces in the HTML drill-down: nested collapsible <details>, escaped, no script."""

from __future__ import annotations

import json
from pathlib import Path

from eval_harness.reports.html import trace_view
from eval_harness.reports.html.trace_view import trace_html


def test_drilldown_shows_the_nested_trace(written: dict[str, Path]) -> None:
    page = written["html"].read_text(encoding="utf-8")
    assert '<details class="trace"><summary>trace · 3 step(s)</summary>' in page
    block = page.split('<details class="trace">')[1].split("</details></details>")[0]
    # the tool step is inside the llm step's <details>
    assert block.index("llm plan · 0.25 s") < block.index("tool search")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in block and "<script" not in page.lower()
    assert '<p class="trace-step">tool noop</p>' in page  # nothing to expand: no <details>


def test_step_limit_and_missing_trace(tmp_path: Path, monkeypatch) -> None:
    assert trace_html(tmp_path) == ""
    steps = [{"kind": "tool", "name": f"t{i}", "children": []} for i in range(5)]
    (tmp_path / "trace.json").write_text(json.dumps({"steps": steps, "dropped": 2}))
    monkeypatch.setattr(trace_view, "MAX_STEPS", 3)
    html = trace_html(tmp_path)
    assert html.count('class="trace-step"') == 3 and "4 more step(s) not shown" in html
