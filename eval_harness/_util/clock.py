"""The one clock: UTC timestamps, as ISO-8601 text.

Two kinds of time, on purpose:

- :func:`utc_now_iso`: the time an OUTPUT DOCUMENT was generated (``generated_at`` of
  anova.json, report.json, a baseline export). ``SOURCE_DATE_EPOCH`` (reproducible-builds
  convention: seconds since the epoch) replaces "now" when set, so documents built twice
  from the same runs are byte-identical. Second resolution, ``Z`` suffix.
- :func:`utc_timestamp` / :func:`utc_date`: when something HAPPENED (a cell started or
  finished, a run directory was opened, a config was recorded, a record was rescored).
  Always the real time, never ``SOURCE_DATE_EPOCH``: resuming compares these times, and a
  run directory records what happened when. ``+00:00`` suffix (as run.json always had).
"""

from __future__ import annotations

import datetime as _dt
import os


def utc_now_iso() -> str:
    """Document time: ``2026-01-31T12:00:00Z``; ``SOURCE_DATE_EPOCH`` when set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch
         else _dt.datetime.now(_dt.timezone.utc))
    return t.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def utc_timestamp(timespec: str = "microseconds") -> str:
    """Event time, the real UTC now: ``2026-01-31T12:00:00.123456+00:00`` (sortable)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec=timespec)


def utc_date() -> str:
    """Today's UTC date, ``2026-01-31`` (run directory names)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")
