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
import math
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from eval_harness._util.atomic_files import file_lock
from eval_harness._util.file_modes import create_file
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
        description='"right" / "wrong" about the judge\'s verdict, or the true score '
                    '(a finite number; never a boolean).')
    who: str = Field("", description="Who labelled (free text).")
    when: str = Field(description="ISO-8601 UTC time of the label.")

    @field_validator("label", mode="before")
    @classmethod
    def _finite_number_or_word(cls, value: object) -> object:
        """``true`` is not ``1.0``, and NaN / ±Infinity / 1e999 are no score."""
        if isinstance(value, bool):
            raise ValueError('a label is "right", "wrong" or a number, not true/false')
        if isinstance(value, (int, float)) and not math.isfinite(value):
            raise ValueError("a numeric label must be a finite number")
        return value

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
    # allow_nan=False: never a line no JSON reader takes (the row refuses them already)
    line = json.dumps(row.model_dump(), ensure_ascii=False, sort_keys=True,
                      allow_nan=False) + "\n"
    with file_lock(Path(eval_dir) / ".labels.lock"), open(create_file(path, append=True), "a", encoding="utf-8") as fh:
        fh.write(line)


def read_labels(path: str | os.PathLike[str]) -> list[LabelRow]:
    """Every label in file order; a malformed line is a ConfigError naming it (exit 2)."""
    rows, problems = read_labels_lenient(path)
    if problems:
        raise problems[0]
    return rows


def read_labels_lenient(path: str | os.PathLike[str]
                        ) -> tuple[list[LabelRow], list[ConfigError]]:
    """(every good label in file order, a ConfigError naming file and line for each bad
    one): not UTF-8, not JSON, nested too deep, not an object, not a label. The dashboard
    shows the problems and keeps the good labels; the CLI stops at the first."""
    path = Path(path)
    if not path.is_file():
        return [], []
    from eval_harness.config.jsonl import read_jsonl_lines

    rows: list[LabelRow] = []
    problems: list[ConfigError] = []
    try:
        lines = list(read_jsonl_lines(path))
    except ConfigError as exc:  # the file itself cannot be read
        return [], [exc]
    for n, value in lines:
        if isinstance(value, ConfigError):
            problems.append(value)
            continue
        try:
            rows.append(LabelRow.model_validate(value))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            if isinstance(exc, ValidationError) and exc.errors():
                err = exc.errors()[0]
                first = f"{'.'.join(map(str, err['loc'])) or 'line'}: {err['msg']}"
            problems.append(ConfigError(
                f"bad label: {first[:200]}", file=str(path), line=n,
                hint='{"run", "case", "condition", "replication", "judge", '
                     '"label": "right"|"wrong"|<score>, "who", "when"}'))
    return rows, problems


def latest_labels(rows: list[LabelRow]) -> dict[LabelKey, LabelRow]:
    """The label that counts per (condition, replication, case, judge): the last one."""
    return {row.key: row for row in rows}
