"""Dataset loading: case folders, or one YAML / JSONL file of cases.

A case folder ``<dataset>/<case-id>/`` holds ``input.yaml`` and optionally
``expected.yaml``, ``annotations.yaml`` and other files. A file dataset holds a list of
``{id, input, expected?, annotations?, tags?}`` (YAML list or mapping id -> case, or one
JSON object per line). An input that is a bare string becomes ``{"prompt": text}``.
Tags (``annotations.tags`` plus scalar annotations such as ``tier``) feed strata.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_harness.config.jsonl import read_jsonl
from eval_harness.config.yamlio import YamlProblem, parse_yaml, read_yaml_text
from eval_harness.errors import DatasetError

CASE_ID = re.compile(r"^[A-Za-z0-9._-]+\Z")  # \Z: `$` also matches before a final newline


@dataclass(frozen=True)
class Case:
    """One dataset case."""

    case_id: str
    input: dict[str, Any]
    expected: Any = None
    annotations: dict[str, Any] = field(default_factory=dict)
    directory: Path | None = None  # case folder (its other files are available to runners)

    @property
    def tags(self) -> dict[str, Any]:
        """Scalar annotations plus ``annotations.tags``."""
        out = {k: v for k, v in self.annotations.items()
               if isinstance(v, (str, int, float, bool)) and k != "tags"}
        extra = self.annotations.get("tags")
        if isinstance(extra, dict):
            out.update(extra)
        return out

    @property
    def case_hash(self) -> str:
        """Hash of the case definition (input + expected): changes mark a case modified."""
        payload = json.dumps({"input": self.input, "expected": self.expected},
                             sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def check_case_id(case_id: Any, where: str) -> str:
    """Validate a case id (ASCII letters, digits, `.`, `_`, `-`; not `.`/`..`): it names a
    folder on every filesystem the runs may travel to."""
    if isinstance(case_id, (int, float)):
        raise DatasetError(f"case id {case_id!r} is a number", path=where,
                           hint=f'quote it: id: "{case_id}" (YAML reads 0017 as a number)')
    if not isinstance(case_id, str) or not CASE_ID.match(case_id) or case_id in (".", ".."):
        raise DatasetError(f"invalid case id {case_id!r}", path=where,
                           hint="case ids use ASCII letters, digits, `.`, `_`, `-`")
    problem = folder_name_problem(case_id)
    if problem:
        shown = case_id if len(case_id) <= 60 else case_id[:57] + "..."
        raise DatasetError(f"case id {shown!r} {problem}", path=where,
                           hint="rename the case: its id is a folder name in every run")
    return case_id


#: Windows device names, reserved with any extension (``con.txt``) and in any case
RESERVED_NAMES = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                            *(f"LPT{i}" for i in range(1, 10))})
MAX_ID_BYTES = 200


def folder_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a folder on common filesystems (or is skipped as hidden)."""
    if len(name.encode("utf-8")) > MAX_ID_BYTES:
        return (f"is {len(name.encode('utf-8'))} bytes long: at most {MAX_ID_BYTES} "
                "(file systems cap a name at 255 bytes; the run path adds more)")
    if name.startswith("."):
        return "starts with a dot: a hidden folder, which the analysis skips"
    if name.endswith("."):
        return "ends with a dot: Windows drops it, so two ids could share a folder"
    if name.split(".")[0].upper() in RESERVED_NAMES:
        return "is a reserved device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)"
    return None


def _as_input(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        return {"prompt": value}
    if isinstance(value, dict):
        return value
    raise DatasetError(f"case input must be a mapping or a string, got {type(value).__name__}",
                       path=where, hint="write input: {question: ...}")


def _read_yaml(path: Path) -> Any:
    try:
        return parse_yaml(read_yaml_text(path))[0]
    except YamlProblem as exc:
        raise DatasetError(exc.problem, file=str(path), line=exc.line,
                           path=exc.where()) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read: {exc}".splitlines()[0], file=str(path)) from None


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _load_dir(root: Path) -> list[Case]:
    cases = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if not _inside(root, sub):
            raise DatasetError("case folder escapes the dataset (symlink?)", file=str(sub))
        check_case_id(sub.name, f"dataset/{sub.name}")
        input_file = sub / "input.yaml"
        if not input_file.exists():
            raise DatasetError("case folder has no input.yaml", file=str(sub),
                               hint="every case folder needs input.yaml")
        for f in sub.rglob("*"):
            if f.is_symlink() and not _inside(root, f):
                raise DatasetError("file links outside the dataset", file=str(f))
        expected = _read_yaml(sub / "expected.yaml") if (sub / "expected.yaml").exists() else None
        ann = _read_yaml(sub / "annotations.yaml") if (sub / "annotations.yaml").exists() else {}
        if ann is not None and not isinstance(ann, dict):
            raise DatasetError("annotations.yaml must hold a mapping", file=str(sub / "annotations.yaml"),
                               hint="write key: value lines, e.g. tier: hard")
        cases.append(Case(sub.name, _as_input(_read_yaml(input_file), str(input_file)), expected,
                          ann or {}, sub))
    return cases


def _case_from_entry(entry: Any, where: str, fallback_id: str | None = None) -> Case:
    if not isinstance(entry, dict):
        raise DatasetError("a case must be a mapping with `id` and `input`", path=where)
    unknown = set(entry) - {"id", "input", "expected", "annotations", "tags"}
    if unknown:
        raise DatasetError(f"unknown case key(s): {', '.join(sorted(unknown))}", path=where,
                           hint="cases have id, input, expected, annotations, tags")
    case_id = check_case_id(entry.get("id", fallback_id), f"{where}.id")
    if "input" not in entry:
        raise DatasetError("case has no `input`", path=where)
    ann = entry.get("annotations")
    if ann is not None and not isinstance(ann, dict):
        raise DatasetError(f"annotations must be a mapping, got {type(ann).__name__}",
                           path=f"{where}.annotations", hint="write annotations: {tier: hard}")
    ann = dict(ann or {})
    if entry.get("tags"):
        ann["tags"] = entry["tags"]
    return Case(case_id, _as_input(entry["input"], f"{where}.input"), entry.get("expected"), ann)


def _load_file(path: Path) -> list[Case]:
    """Cases of a .jsonl or YAML file; an error names the file (and the JSONL line)."""
    if path.suffix == ".jsonl":
        cases = []
        for n, entry in read_jsonl(path, DatasetError):
            try:
                cases.append(_case_from_entry(entry, ""))
            except DatasetError as exc:
                raise DatasetError(exc.detail, path=exc.key_path.lstrip("."), file=str(path),
                                   line=n, hint=exc.hint) from None
        return cases
    try:
        return _load_yaml_cases(path)
    except DatasetError as exc:
        if exc.file is not None:
            raise
        raise DatasetError(exc.detail, path=exc.key_path, file=str(path), hint=exc.hint) from None


def _load_yaml_cases(path: Path) -> list[Case]:
    data = _read_yaml(path)
    if isinstance(data, dict) and "cases" in data:
        data = data["cases"]
    if isinstance(data, dict):
        return [_case_from_entry(v, f"cases.{k}", str(k)) for k, v in data.items()]
    if isinstance(data, list):
        return [_case_from_entry(v, f"cases[{i}]") for i, v in enumerate(data)]
    raise DatasetError("a dataset file holds a list of cases", file=str(path))


def load_dataset(path: Path, *, only: Sequence[str] | None = None, limit: int | None = None) -> list[Case]:
    """Load every case under ``path``; ``only`` keeps the named ids, ``limit`` the first N."""
    if not path.exists():
        raise DatasetError("dataset not found", file=str(path), path="dataset.path",
                           hint="paths are relative to the config file")
    if not path.is_dir() and not path.is_file():  # a FIFO or device (/dev/zero) never loads
        raise DatasetError("not a regular file or a folder (a FIFO or device?)", file=str(path),
                           path="dataset.path", hint="point dataset.path at a .jsonl / .yaml "
                           "file or a folder of cases")
    cases = _load_dir(path) if path.is_dir() else _load_file(path)
    seen: set[str] = set()
    for case in cases:
        if case.case_id in seen:
            raise DatasetError(f"duplicate case id {case.case_id!r}", file=str(path))
        seen.add(case.case_id)
    if only:
        missing = [c for c in only if c not in seen]
        if missing:
            raise DatasetError(f"unknown case id(s): {', '.join(missing)}", path="--cases",
                               hint="ids are the case folder names")
        keep = set(only)
        cases = [c for c in cases if c.case_id in keep]
    if limit is not None:
        if limit < 1:
            raise DatasetError("--limit must be >= 1", path="--limit")
        cases = cases[:limit]
    if not cases:
        raise DatasetError("the dataset has no cases", file=str(path), path="dataset.path",
                           hint="a folder dataset holds one sub-folder per case, each with "
                           "input.yaml; a file holds a list of cases")
    return cases
