"""``comparisons.json`` on disk: a small summary plus the per-case rows as JSON Lines.

At scale the per-case rows are almost all of the document (80 MB at 16 conditions × 5,000
cases as one indented JSON file), so they are written beside it:

- ``comparisons.json`` — the document of ``build_comparisons`` with every comparison's
  ``cases`` list removed, ``schema_version`` 2, ``cases_file`` naming the rows file and,
  per comparison, ``n_case_rows``;
- ``comparisons.cases.jsonl`` — one compact JSON object per line: a per-case row of one
  comparison (the fields of ``compare.compare_sides``) with ``comparison`` (its index in
  ``comparisons``), ``kind``, ``reference_id`` and ``candidate_id`` added.

``read_comparisons(out_dir)`` returns the full document (rows put back under ``cases``),
for version 1 files too. Everything else in the summary is unchanged.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from eval_harness._util.atomic_files import atomic_text_writer
from eval_harness._util.json_text import json_text, write_text_atomic
from eval_harness.analysis.compare.rows import CaseRows

SUMMARY = "comparisons.json"
CASES_FILE = "comparisons.cases.jsonl"
SCHEMA_VERSION = 2
_CHUNK = 5_000
_ROW_KEYS = ("comparison", "kind", "reference_id", "candidate_id")


def _head(i: int, rec: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a per-case row of comparison ``i`` gets in front of its own."""
    return {"comparison": i, "kind": rec.get("kind"),
            "reference_id": (rec.get("reference") or {}).get("condition_id"),
            "candidate_id": (rec.get("candidate") or {}).get("condition_id")}


def _summary(doc: Mapping[str, Any]) -> dict[str, Any]:
    summary = {k: v for k, v in doc.items() if k != "comparisons"}
    summary["schema_version"] = SCHEMA_VERSION
    summary["cases_file"] = CASES_FILE
    summary["comparisons"] = [
        {**{k: v for k, v in rec.items() if k != "cases"}, "n_case_rows": len(rec.get("cases") or [])}
        for rec in doc.get("comparisons") or []]
    return summary


def split_comparisons(doc: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary document, per-case rows) of a ``build_comparisons`` document."""
    rows: list[dict[str, Any]] = []
    for i, rec in enumerate(doc.get("comparisons") or []):
        head = _head(i, rec)
        rows.extend({**head, **row} for row in rec.get("cases") or [])
    return _summary(doc), rows


def _row_lines(doc: Mapping[str, Any]) -> Iterator[str]:
    """The JSON Lines of ``split_comparisons``'s rows, without building the merged dicts:
    a comparison's head fields are encoded once and put in front of each row's own
    (the same text as encoding the merged row, asserted in the tests)."""
    dumps = json.JSONEncoder(separators=(",", ":"), default=str, allow_nan=False).encode
    blocks: dict[int, list[str | None]] = {}  # side block texts, for this write only
    for i, rec in enumerate(doc.get("comparisons") or []):
        head = _head(i, rec)
        prefix = dumps(head)[:-1]  # '{"comparison":0,...,"candidate_id":"x"'
        rows = rec.get("cases") or []
        if isinstance(rows, CaseRows):  # columns: encoded without building the dicts
            yield from rows.json_lines(prefix, dumps, blocks)
            continue
        for row in rows:
            if not row or any(k in row for k in _ROW_KEYS):  # rare: merge as documented
                yield dumps({**head, **row}) + "\n"
            else:
                yield prefix + "," + dumps(row)[1:] + "\n"


def write_comparisons(out_dir: str | Path, doc: Mapping[str, Any],
                      clean: Callable[[str], str] = lambda text: text) -> list[Path]:
    """Write the summary and the rows file (each atomically); ``clean`` filters the text
    (e.g. secret redaction). Returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / CASES_FILE
    with atomic_text_writer(rows_path) as fh:
        lines = _row_lines(doc)
        while chunk := list(itertools.islice(lines, _CHUNK)):  # one filter call per chunk
            fh.write(clean("".join(chunk)))
    path = out / SUMMARY
    write_text_atomic(path, clean(json_text(_summary(doc))))  # indented unless large
    return [path, rows_path]


def read_comparisons(out_dir: str | Path) -> dict[str, Any]:
    """The full comparisons document written into ``out_dir`` (per-case rows under each
    comparison's ``cases``), from a version 2 pair of files or a version 1 file."""
    out = Path(out_dir)
    doc = dict(json.loads((out / SUMMARY).read_text(encoding="utf-8")))
    name = doc.pop("cases_file", None)
    if name is None:
        return doc  # version 1: rows inline
    comps = [dict(c) for c in doc.get("comparisons") or []]
    for c in comps:
        c.pop("n_case_rows", None)
        c["cases"] = []
    with open(out / Path(str(name)).name, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                index = row.pop("comparison")
                for key in _ROW_KEYS[1:]:
                    row.pop(key, None)
                comps[index]["cases"].append(row)
    doc["comparisons"] = comps
    doc["schema_version"] = 1
    return doc
