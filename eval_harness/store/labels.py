"""Human labels of judge verdicts: ``<eval-dir>/labels.jsonl``, beside the run directories.

One JSON object per line (docs/dashboard.md, "Labels")::

    {"schema_version": 1, "run": "2026-07-30-small-low", "case": "geo-03",
     "condition": "3f1c0e9a2b4d", "replication": 1, "judge": "correct",
     "label": "wrong", "who": "ana", "when": "2026-07-30T10:00:00+00:00"}

``label`` is ``"right"`` (the judge's verdict is correct), ``"wrong"`` (it is not), or a
number: the true score on the judge's own scale. The file is append-only: a later line for
the same (condition, replication, case, judge) supersedes earlier ones, so a person can
change their mind without anything being rewritten. Labels never enter run records.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval_harness._util.atomic_files import file_lock
from eval_harness.errors import ConfigError

LABELS_FILE = "labels.jsonl"
SCHEMA_VERSION = 1

LabelKey = tuple[str, int, str, str]  # (condition, replication, case, judge)


class LabelRow(BaseModel):
    """One person's verdict on one judge value of one sample."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = Field(SCHEMA_VERSION, description="Record format version.")
    run: str = Field(description="Run id (the run directory's name).")
    case: str = Field(description="Case id.")
    condition: str = Field(description="Condition id (12 hex digits).")
    replication: int = Field(1, ge=1, description="1-based replication index.")
    judge: str = Field(description="Judge name.")
    label: Literal["right", "wrong"] | float = Field(
        description='"right" / "wrong" about the judge\'s verdict, or the true score.')
    who: str = Field("", description="Who labelled (free text).")
    when: str = Field(description="ISO-8601 UTC time of the label.")

    @property
    def key(self) -> LabelKey:
        """The sample and judge this label is about."""
        return (self.condition, self.replication, self.case, self.judge)


def labels_path(eval_dir: str | os.PathLike[str]) -> Path:
    """Where the labels of the runs in ``eval_dir`` live."""
    return Path(eval_dir) / LABELS_FILE


def append_label(eval_dir: str | os.PathLike[str], row: LabelRow) -> None:
    """Append one label (one ``write`` under the eval's lock: lines never interleave)."""
    path = labels_path(eval_dir)
    line = json.dumps(row.model_dump(), ensure_ascii=False, sort_keys=True) + "\n"
    with file_lock(Path(eval_dir) / ".labels.lock"), open(path, "a", encoding="utf-8") as fh:
        fh.write(line)


def read_labels(path: str | os.PathLike[str]) -> list[LabelRow]:
    """Every label in file order; a malformed line is a ConfigError naming it (exit 2)."""
    path = Path(path)
    if not path.is_file():
        return []
    from eval_harness.config.jsonl import read_jsonl

    rows: list[LabelRow] = []
    # not UTF-8, invalid or too deeply nested JSON: a ConfigError naming file and line
    for n, value in read_jsonl(path):
        try:
            rows.append(LabelRow.model_validate(value))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise ConfigError(f"bad label: {first}", file=str(path), line=n,
                              hint='{"run", "case", "condition", "replication", "judge", '
                                   '"label": "right"|"wrong"|<score>, "who", "when"}'
                              ) from None
    return rows


def latest_labels(rows: list[LabelRow]) -> dict[LabelKey, LabelRow]:
    """The label that counts per (condition, replication, case, judge): the last one."""
    return {row.key: row for row in rows}
