"""One agent-eval-harness run directory for people and dashboards (``orchestrate runs`` /
``show``, report drill-down): its condition, its cases, and per case the judges' values
**and rationales**, the composite its rule gives, and latency / cost / tokens.

Where each fact comes from (its layout; the scoring is :mod:`eval_harness.aeh.scoring`):

- levels and condition id: ``condition.json``, else the model in ``run_result.json``;
- judges: ``summary.yaml`` ``per_case.<case>.<judge>`` (``value``, ``rationale``,
  ``error``);
- latency / cost / tokens: ``run_result.json`` ``per_case.<case>`` (``duration_s``,
  ``cost_usd``, ``token_usage``), else ``cases/<case>/run_result.json``;
- the answer: ``cases/<case>/stdout.log`` (what the agent printed), when kept;
- the input: ``cases/<case>/input.yaml``, when kept.

Everything here reads files only (a symlinked file is not followed); a missing file is a
missing fact (None), never an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval_harness._util.numbers import run_number
from eval_harness.aeh.scoring import (
    SUMMARY,
    AehRule,
    case_facts,
    case_record,
    read_summary,
    run_dict,
)
from eval_harness.analysis.loading.run_views import CaseView, JudgeView
from eval_harness.analysis.loading.runfiles import UnreadableRun, read_json_object
from eval_harness.config.yamlfast import fast_load
from eval_harness.config.yamlio import read_yaml_text
from eval_harness.store.confine import open_run_file

MAX_TEXT = 200_000  # characters of a log shown as the answer
#: at most this many cases are read from their own entries' text (beyond: one full parse)
MAX_SLICED = 400
#: a key of ``per_case`` read from its own line (others: the whole summary is parsed)
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./+()-]*")
_KEY_LINES = re.compile(r"(?:" + _PLAIN_KEY.pattern + r":(?: \{\})?\n)*")  # {}: no judges
_TWO = re.compile(r"^  ", re.MULTILINE)
_INDENTED_TWO = re.compile(r"\n  ([^ \n][^\n]*)")
_TOP_LINE = re.compile(r"\n([^ \n#][^\n]*)")
#: first characters of a top-level line that make it other than a plain key
_NOT_PLAIN = "'\"?{[&*!%-.@`|>\t\r"
#: first characters of a plain scalar PyYAML may read as other than a string
_RESOLVED_FIRST = frozenset("+-.0123456789<=FNOTYfnoty~")


@dataclass(frozen=True)
class AehRun:
    """One run directory: what the loader needs, plus its case ids in summary order."""

    path: Path
    run_id: str
    condition_id: str
    levels: dict[str, Any]
    cost_usd: float | None
    case_ids: list[str]


def read_run(path: str | os.PathLike[str]) -> AehRun:
    """The run's facts (UnreadableRun when summary.yaml cannot be read)."""
    summary = read_summary(str(path))
    run = run_dict(str(path), summary)
    return AehRun(Path(path), run["run_id"], run["condition_id"], dict(run["levels"]),
                  run["cost_usd"], [str(c) for c in (summary.get("per_case") or {})])



def _text(path: Path) -> str | None:
    try:
        with open_run_file(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read(MAX_TEXT)
    except OSError:
        return None


def read_case(path: str | os.PathLike[str], case_id: str, rule: AehRule | None = None
              ) -> CaseView | None:
    """One case of the run (None when the summary has no such case)."""
    return next(iter_cases(path, [case_id], rule), None)


def iter_cases(path: str | os.PathLike[str], case_ids: Iterable[str],
               rule: AehRule | None = None, *, sliced: bool = True) -> Iterator[CaseView]:
    """The cases ``case_ids`` of the run that its summary has, in that order (each once),
    parsing ``summary.yaml`` and ``run_result.json`` once for all of them: a run's summary
    holds every case, so reading it per case is quadratic in cases. One case at a time, so
    a caller keeps only the answers it needs.

    ``sliced`` (and at most :data:`MAX_SLICED` ids): the entries are parsed from their own
    lines of the summary when that is provably the same data (:func:`_entries_of`), not
    from a parse of the whole summary — the drill-down of a report shows a few cases of
    runs just loaded."""
    run_dir = Path(path)
    case_ids = list(case_ids)
    entries = (_entries_of(run_dir, case_ids) if sliced and len(case_ids) <= MAX_SLICED
               else None)
    if entries is None:
        try:
            summary = read_summary(str(run_dir))
        except UnreadableRun:
            return
        per_case = summary.get("per_case") or {}
        # the entry of a case id is its first key whose text is that id
        entries = {str(k): v for k, v in reversed(list(per_case.items()))}
    try:
        run_facts: Mapping[str, Facts] | None = case_facts(
            read_json_object(str(run_dir / "run_result.json")))
    except UnreadableRun:
        run_facts = None  # an unreadable run_result.json: no case has facts
    done: set[str] = set()
    for case_id in case_ids:
        if case_id in entries and case_id not in done:
            done.add(case_id)
            yield _case(run_dir, case_id, entries[case_id], rule or AehRule(), run_facts)


Facts = tuple[float, float, float]


def _str_plain(text: str) -> bool:
    """Whether the plain scalar ``text`` reads as that very string (not a number, a
    boolean, null, a date, ...)."""
    import yaml

    return bool(_PLAIN_KEY.fullmatch(text)) and yaml.resolver.Resolver().resolve(
        yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"


def _entries_of(run_dir: Path, case_ids: list[str]) -> dict[str, Any] | None:
    """{case id: its ``per_case`` entry} for ``case_ids``, each parsed from its own lines of
    summary.yaml; None (parse the whole summary) unless that is provably the same data.

    The drill-down shows at most a few hundred cases of runs the loader has just parsed
    whole; parsing each run's summary again for them cost as much as loading it (a second
    parse of every summary.yaml). Keeping the parsed summaries instead would hold every
    run's cases at once (3 MB a run of 5,000 cases). So the wanted entries are cut out of
    the text: the lines from ``  <id>:`` to the next line indented two, or the first line
    not indented, within the one ``per_case:`` line's block. It is the same data when the
    layout is the one ``yaml.dump`` writes, and that is checked: the top level is not
    indented and has plain keys only, one line starting ``per_case`` and that ``per_case:``, whose block indents its keys by two, every line
    indented two is a plain key (on its own line) that reads as the same string, no two
    alike, and every wanted id is one of them. A line inside a quoted text that looks like
    a key then either repeats a real key (refused) or cuts a quoted text short (its slice
    does not parse: refused). Each slice must parse to one mapping of exactly that key.
    """
    try:
        text = "\n" + read_yaml_text(run_dir / SUMMARY, nofollow=True)  # each line after a \n
    except (OSError, ValueError):
        return None
    start = end = first = -1  # per_case's block: from the \n ending its line to the next top line
    for top in _TOP_LINE.finditer(text):  # the lines not indented (comments aside)
        line = top.group(1)
        if not line.strip():
            continue
        if first == -1:
            first = top.start()
            if any(ln.strip() and not ln.lstrip().startswith("#")
                   for ln in text[:first].split("\n")):
                return None  # the document is indented: its keys are not these lines
        if start != -1 and end == -1:
            end = top.start()
        if line[0] in _NOT_PLAIN:
            return None  # not plain top-level keys: a document marker, a quoted key, ...
        if line.startswith("per_case"):  # "per_case :", "per_case_x:": refused too
            if start != -1 or line.rstrip() != "per_case:":
                return None
            start = top.end()
    if start == -1:
        return None
    end = len(text) if end == -1 else end
    lines = _INDENTED_TWO.findall(text, start, end)  # every line indented two
    if not lines or not _KEY_LINES.fullmatch("\n".join(lines) + "\n"):
        return None  # one is not "<plain key>:" (or "<plain key>: {}") on its own line
    keys = [line.partition(":")[0] for line in lines]
    at = dict(zip(keys, range(len(keys)), strict=True))
    if len(at) != len(keys) or not all(
            _str_plain(key) for key in keys if key[0] in _RESOLVED_FIRST):
        return None  # two alike, or a key that reads as a number, a boolean, null, ...
    # each key's line is the only line of that text in the block: found by it, in order
    pos = start

    def line_of(i: int) -> int:  # the \n before line i (end: past the last)
        return text.find(f"\n  {lines[i]}\n", pos, end + 1) if i < len(lines) else end

    if text[start:line_of(0)].strip():
        return None  # the block does not start with a key indented two
    wanted = sorted({at[cid] for cid in case_ids if cid in at})
    if len(wanted) != len(set(case_ids)):
        return None
    slices = []
    for i in wanted:
        here = line_of(i)
        pos = max(here, start)
        nxt = line_of(i + 1)
        if here < 0 or nxt < 0:
            return None
        slices.append(text[here + 1:nxt] + "\n")
    # one parse for all of them, unless an alias could name an anchor of another entry
    groups = [slices] if not any("*" in piece for piece in slices) else [[p] for p in slices]
    out: dict[str, Any] = {}
    for group in groups:
        doc = "".join(group)
        if all(not line or line.startswith("  ") for line in doc.split("\n")):
            doc = _TWO.sub("", doc)  # the same document, indented two less
        try:
            got = fast_load(doc)
        except (ValueError, RecursionError):
            return None
        names = [keys[i] for i in wanted[len(out):len(out) + len(group)]]
        if not (isinstance(got, dict) and list(got) == names):
            return None
        out.update(got)
    return out


def _own_facts(case_dir: Path, case_id: str) -> Facts | None:
    """The case's facts from its own ``cases/<id>/run_result.json``."""
    try:
        own = read_json_object(str(case_dir / "run_result.json"))
    except UnreadableRun:
        return None
    return case_facts({"per_case": {case_id: own}}).get(case_id) if own else None


def _case(run_dir: Path, case_id: str, raw: Any, rule: AehRule,
          run_facts: Mapping[str, Facts] | None) -> CaseView:
    rec = case_record(case_id, raw, rule)
    judges = [JudgeView(str(n), s.get("value"), s.get("rationale"), bool(s.get("errored")),
                       s.get("error")) for n, s in sorted(rec["scores"].items())]
    case_dir = run_dir / "cases" / case_id
    facts = None if run_facts is None else (
        run_facts.get(case_id) or _own_facts(case_dir, case_id))
    latency, cost, tokens = facts if facts is not None else (None, None, None)
    inp: Any = None
    raw_input = _text(case_dir / "input.yaml")
    if raw_input is not None:
        import yaml

        try:
            inp = yaml.safe_load(raw_input)
        except yaml.YAMLError:
            inp = raw_input
    errored = bool(rec.get("composite_errored"))
    return CaseView(case_id=case_id, status="errored" if errored else "ok",
                   composite=rec.get("composite"), judges=judges, latency_s=run_number(latency),
                   cost_usd=run_number(cost), tokens=run_number(tokens),
                   output=_text(case_dir / "stdout.log"), input=inp,
                   reason="no judge could score it" if errored else None)
