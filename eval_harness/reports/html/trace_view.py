"""A case's trace in the HTML drill-down: nested, collapsible ``<details>`` (no script).

Each step is one ``<details>`` whose summary reads ``kind name · duration`` and whose body
holds its input, output (both already clipped and masked when stored) and children. At
most :data:`MAX_STEPS` steps are drawn per attempt; everything is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval_harness.reports import fmt
from eval_harness.reports.html.sections import esc
from eval_harness.trace.model import Step
from eval_harness.trace.reader import read_trace

MAX_STEPS = 200
MAX_VALUE = 1500


def _value(label: str, value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                           default=str)
    return f'<p class="note">{esc(label)}</p><pre>{esc(fmt.truncate(text, MAX_VALUE))}</pre>'


class _Drawer:
    def __init__(self) -> None:
        self.left = MAX_STEPS

    def step(self, step: Step) -> str:
        if self.left <= 0:
            return ""
        self.left -= 1
        head = f"{step.kind} {step.name}".strip()
        if step.duration is not None:
            head += f" · {step.duration:.3g} s"
        body = _value("input", step.input) + _value("output", step.output)
        body += "".join(self.step(c) for c in step.children)
        if not body:
            return f'<p class="trace-step">{esc(head)}</p>'
        return f'<details class="trace-step"><summary>{esc(head)}</summary>{body}</details>'


def trace_html(case_dir: Path) -> str:
    """The trace block of one attempt, or empty when it stored no trace."""
    trace = read_trace(case_dir)
    if trace is None:
        return ""
    total = sum(1 for _ in trace.walk())
    drawer = _Drawer()
    inner = "".join(drawer.step(s) for s in trace.steps)
    note = ""
    hidden = total - (MAX_STEPS - drawer.left) + trace.dropped
    if hidden > 0:
        note = f'<p class="note">{hidden} more step(s) not shown (see trace.json)</p>'
    return (f'<details class="trace"><summary>trace · {total} step(s)</summary>{inner}{note}'
            "</details>")
