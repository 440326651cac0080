"""Claude Code's ``--output-format stream-json`` events as a trace.

Each stdout line is one JSON event. ``assistant`` events carry content blocks: a ``text``
block is an ``llm`` step (name: the message's model, output: the text), a ``tool_use`` block
a ``tool`` step (name, input; its ``id`` links the result). ``user`` events carry
``tool_result`` blocks whose ``content`` becomes the output of the tool step with that
``tool_use_id``. An event whose ``parent_tool_use_id`` names a tool step (a subagent
started by the ``Task`` tool) nests its steps under that step. The final ``result`` event is
the reply object the runner reads as with ``--output-format json``.
"""

from __future__ import annotations

import json
from typing import Any

from eval_harness.trace.model import Trace, build_trace


def _events(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def _result_text(content: Any) -> Any:
    if isinstance(content, list):  # [{type: text, text}, ...]
        texts = [b.get("text") for b in content if isinstance(b, dict) and "text" in b]
        return "\n".join(str(t) for t in texts) if len(texts) == len(content) else content
    return content


def trace_from_stream(stdout: str) -> Trace | None:
    """The trace of a stream-json transcript, or None when it holds no step."""
    roots: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    for event in _events(stdout):
        kind = event.get("type")
        message = event.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        if kind not in ("assistant", "user") or not isinstance(blocks, list):
            continue
        parent = tools.get(str(event.get("parent_tool_use_id")))
        into = parent["children"] if parent is not None else roots
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if kind == "assistant" and btype == "text":
                into.append({"kind": "llm", "name": str(message.get("model") or "assistant"),  # type: ignore[union-attr]
                             "output": block.get("text"), "children": []})
            elif kind == "assistant" and btype == "tool_use":
                step: dict[str, Any] = {"kind": "tool", "name": block.get("name"),
                                        "input": block.get("input"), "children": []}
                tools[str(block.get("id"))] = step
                into.append(step)
            elif kind == "user" and btype == "tool_result":
                target = tools.get(str(block.get("tool_use_id")))
                if target is not None:
                    target["output"] = _result_text(block.get("content"))
    return build_trace(roots) if roots else None
