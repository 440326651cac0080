"""Replies from agents and HTTP services are untrusted text: make them safe to keep.

- **Invalid Unicode.** A JSON reply may carry lone surrogates (``"\\ud800"``), which cannot
  be written as UTF-8: writing ``outputs.json`` raised UnicodeEncodeError, recorded as an
  internal error. :func:`clean_text` replaces them (U+FFFD), as undecodable bytes are.
- **Nesting.** A reply nested thousands deep made RecursionError in parsing or in writing
  it back; :func:`too_deep` (iterative, no recursion) lets parsers refuse replies nested
  past :data:`MAX_DEPTH` levels as malformed output.

The helpers live in :mod:`eval_harness._util.untrusted_json` (judges parse replies too);
:func:`scrub_result` applies both to every runner's result (:mod:`eval_harness.runner.cell`).
"""

from __future__ import annotations

from eval_harness._util.untrusted_json import MAX_DEPTH, clean_text, clean_value, too_deep
from eval_harness.runner.contract import RunResult
from eval_harness.trace.model import build_trace


def scrub_result(result: RunResult) -> RunResult:
    """Make a runner's result writable: valid text everywhere, no over-deep structures."""
    result.output = clean_text(result.output if isinstance(result.output, str)
                               else str(result.output))
    result.stdout, result.stderr = clean_text(result.stdout), clean_text(result.stderr)
    if result.reason is not None:
        result.reason = clean_text(str(result.reason))
    if result.trace is not None:  # depth and size already bounded by eval_harness.trace
        steps = result.steps
        cleaned = clean_value(steps)
        if cleaned != steps:
            result.trace = build_trace(cleaned)
    for name in ("raw", "files", "modified_files"):
        value = getattr(result, name)
        if value is None:
            continue
        if too_deep(value):
            setattr(result, name, None if name == "raw" else {})
            result.notes.append(f"{name} nested deeper than {MAX_DEPTH} levels; not kept")
        else:
            setattr(result, name, clean_value(value))
    return result
