"""Text bound for GitHub made inert: the one function every GitHub-bound string goes through.

Run data (level names, case ids, judge rationales, an API's error message) reaches GitHub
in two places: Markdown (report.md, the job summary, the pull-request comment) and the job
log (every stdout/stderr line of the Action's steps). There it could act, not just read:

- ``@user`` / ``@org/team`` pings people (and subscribes them to the pull request), and
  ``user@example.com`` becomes a mail link: the ``@`` is written as the fullwidth ``＠``
  (U+FF20), which reads the same and links nothing;
- a bare ``https://…`` / ``http://…`` / ``www.…`` is autolinked (a clickable link chosen
  by a pull request): written defanged, ``https[:]//…`` and ``www[.]…``;
- a log line starting with ``::`` (after blanks: the runner trims them) is a workflow
  command (``::add-mask::``, ``::stop-commands::``, ``::error::``…), and ``##[`` anywhere is
  the older command form: the line's leading ``::`` becomes ``: :`` and ``##[`` becomes
  ``## [``.

Visible substitutions, never invisible characters (those are what
:mod:`eval_harness._util.safe_text` exists to show). Our own Markdown around run data (the
marker comment, the link to the run) is written by us and not passed through.
"""

from __future__ import annotations

import re

#: ``@name`` where GitHub sees a mention (not after a letter: ``pass@3`` stays), and the
#: ``@`` of anything shaped like a mail address (GFM autolinks those)
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@(?=[A-Za-z0-9_])|(?<=[A-Za-z0-9_.+-])@(?=[A-Za-z0-9-]+\.[A-Za-z])")
_SCHEME = re.compile(r"\b(https?|ftp|file)://", re.IGNORECASE)
_WWW = re.compile(r"\b(www)\.", re.IGNORECASE)
_COMMAND = re.compile(r"^([ \t\f\v]*):(?=:)", re.MULTILINE)
_OLD_COMMAND = re.compile(r"##\[")


def for_github(text: str, *, markdown: bool = True) -> str:
    """``text`` made inert on GitHub: workflow-command prefixes always; with ``markdown``
    (the default) also mentions and autolinks. Line structure is kept."""
    out = _OLD_COMMAND.sub("## [", _COMMAND.sub(r"\1: ", text))
    if markdown:
        out = _WWW.sub(r"\1[.]", _SCHEME.sub(r"\1[:]//", _MENTION.sub("\uff20", out)))
    return out


def safe_marker_id(raw: str) -> str:
    """A comment-marker id that cannot end or bend the HTML comment it sits in (no ``>``,
    no ``--``, no line break): letters, digits and ``._:/-``, runs of ``-`` folded, at most
    100 characters; ``eval`` when nothing is left."""
    kept = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._:/-]+", "-", raw)).strip("-")
    return kept[:100].rstrip("-") or "eval"
