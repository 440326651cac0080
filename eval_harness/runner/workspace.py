"""The per-case ``{workspace}`` laid out as agent-eval-harness lays it out.

``{workspace}`` (``cases/<id>/workspace``, an absolute path) holds ``input.yaml`` — the
case's resolved input (condition overrides merged, as its ``--input-override`` does) —
and ``answers.yaml`` when the case folder has one. With ``outputs.paths`` (its
``outputs: [{path}]``) each path is created in the workspace, ``{output_dir}`` is
``{workspace}/output`` and the files under each path are collected as ``<path>/<file>``.
Judges also see ``annotation_<key>_content`` for every annotation naming a file of the
case folder (its judge prompts read the oracle that way), and ``modified_files``: every
file of the workspace the run created or changed (path -> text), its in-place edits.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from eval_harness._util.file_modes import copy_file, create_file, make_dirs

MAX_ANNOTATION_BYTES = 1_000_000


def stage_workspace(workspace: Path, resolved_input: Mapping[str, Any], case_files: Path | None,
                    output_paths: list[str]) -> None:
    """Create the workspace with input.yaml (+ answers.yaml) and the output folders."""
    make_dirs(workspace)
    with open(create_file(workspace / "input.yaml"), "w", encoding="utf-8") as fh:
        yaml.safe_dump(dict(resolved_input), fh, allow_unicode=True, sort_keys=False)
    if case_files is not None and (case_files / "answers.yaml").is_file():
        copy_file(case_files / "answers.yaml", workspace / "answers.yaml")
    for rel in output_paths:
        make_dirs(workspace / rel)


def copy_case_files(workspace: Path, case_files: Path | None, files: Sequence[str]) -> None:
    """``dataset.workspace.files`` (agent-eval-harness): these paths of the case folder are
    copied into the workspace, directories recursively (symlinks copied as links, so
    nothing outside the case folder is read). A listed path the case lacks is skipped, as
    there; a case that is no folder (a JSONL row) has none."""
    if case_files is None or not files:
        return
    root = case_files.resolve()
    for rel in files:
        source = (case_files / rel)
        if not source.exists() or not source.resolve().is_relative_to(root):
            continue
        dest = workspace / rel
        make_dirs(dest.parent)
        if source.is_dir():
            shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, dest)


def collect_paths(workspace: Path, paths: list[str], max_bytes: int) -> dict[str, str]:
    """Files under ``workspace/<path>`` for each path, keyed ``<path>/<relative file>``."""
    found: dict[str, str] = {}
    for rel in paths:
        root = workspace / rel
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                key = path.relative_to(workspace).as_posix()
                with path.open("rb") as fh:
                    found[key] = fh.read(max_bytes).decode("utf-8", "replace")
    return found


def annotation_contents(annotations: Mapping[str, Any], case_files: Path | None) -> dict[str, str]:
    """``annotation_<key>_content`` for each annotation naming a file inside the case folder."""
    out: dict[str, str] = {}
    if case_files is None:
        return out
    base = os.path.realpath(case_files)
    for key, value in annotations.items():
        if not isinstance(value, str) or not value or "\n" in value:
            continue
        target = os.path.realpath(os.path.join(base, value))
        if not target.startswith(base + os.sep) or not os.path.isfile(target):
            continue
        with open(target, "rb") as fh:
            out[f"annotation_{key}_content"] = fh.read(MAX_ANNOTATION_BYTES).decode("utf-8", "replace")
    return out


Snapshot = dict[str, tuple[int, int]]


def snapshot(workspace: Path) -> Snapshot:
    """(size, mtime_ns) of every regular file under ``workspace``."""
    out: Snapshot = {}
    if not workspace.is_dir():
        return out
    for root, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, workspace)] = (st.st_size, st.st_mtime_ns)
    return out


def modified_files(workspace: Path, before: Snapshot, max_bytes: int,
                   skip: list[str] | None = None) -> dict[str, str]:
    """Files created or changed since ``before`` (``skip``: path prefixes collected elsewhere)."""
    out: dict[str, str] = {}
    prefixes = tuple(p.rstrip("/") + "/" for p in skip or [])
    for rel, stat in sorted(snapshot(workspace).items()):
        if before.get(rel) == stat or rel.replace(os.sep, "/").startswith(prefixes):
            continue
        path = workspace / rel
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as fh:
            out[rel.replace(os.sep, "/")] = fh.read(max_bytes).decode("utf-8", "replace")
    return out
