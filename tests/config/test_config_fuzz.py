"""Seeded fuzz of the example config (issue 28): every mutant is accepted (exit 0) or refused
with exit 2 and a key path — never an internal error (exit 70), a traceback or a hang.

Most mutants go through the CLI's error boundary in-process (``--dry-run``: load,
validate, expand, check the dataset and judges; milliseconds each); a few are spawned as
real processes to check the exit codes end to end.
"""

from __future__ import annotations

import copy
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_harness.cli import main as cli_main
from eval_harness.errors import ConfigError, EvalHarnessError
from tests.conftest import ROOT

SEED = 28
N_MUTANTS = 320


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


HOSTILE: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**30, 1e308, -1e308, 1e20, "1e308", "", " ", "x\n",
    "name\n", "\x1b[2J", "\u202egnp.exe", "a\x00b", "/dev/zero", "/dev/null", "${NOPE_28}",
    "${HOME}", "../../../../etc/passwd", "x" * 5000, [], {}, [1, [2, [3]]], {"a": {"b": 1}},
    _deep(250), [None], ["a", "a"], "{model}", "{{ input.x }}", "{% for %}", -0.0, 2**63,
]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _leaves(v, (*path, i))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> None:
    node = root
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _delete(root: Any, path: tuple[Any, ...]) -> None:
    node = root
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]


def mutate(base: dict[str, Any], rng: random.Random, tmp: Path) -> dict[str, Any]:
    """One to three random edits of ``base``: a hostile value anywhere, a deleted or an
    unknown key, or a hostile file reference (extends / dataset)."""
    data = copy.deepcopy(base)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        paths = _leaves(data)
        if op < 0.6 and paths:
            _set(data, rng.choice(paths), copy.deepcopy(rng.choice(HOSTILE)))
        elif op < 0.75 and paths:
            _delete(data, rng.choice(paths))
        elif op < 0.85:
            target = rng.choice([p for p in paths if isinstance(p[-1], str)] or [("name",)])
            _set(data, (*target[:-1], target[-1] + "_typo"), 1)
        else:
            empty = tmp / f"empty-{rng.randrange(10**9)}"
            empty.mkdir()
            choice = rng.choice([("extends", "/dev/zero"), ("dataset", "/dev/zero"),
                                 ("dataset", {"path": str(empty)}), ("dataset", str(empty)),
                                 ("extends", str(empty)), ("extends", ["/dev/null"]),
                                 ("dataset", {"path": "/dev/zero"})])
            data[choice[0]] = choice[1]
    return data


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(ROOT / "configs" / "example", tmp / "example")
    return tmp, yaml.safe_load((ROOT / "configs" / "example.yaml").read_text())


def _mutants(tmp: Path, base: dict[str, Any]) -> list[Path]:
    rng = random.Random(SEED)
    paths = []
    for i in range(N_MUTANTS):
        path = tmp / f"m{i:03d}.yaml"
        path.write_text(yaml.safe_dump(mutate(base, rng, tmp), sort_keys=False,
                                       allow_unicode=True))
        paths.append(path)
    return paths


def _located(exc: EvalHarnessError) -> bool:
    """A key path, or (for a file the config names) the file and line."""
    if not isinstance(exc, ConfigError):
        return False
    return bool(exc.key_path) or bool(exc.file and exc.line)


def test_every_mutant_is_accepted_or_refused_with_a_key_path(
        example: tuple[Path, dict[str, Any]]) -> None:
    tmp, base = example
    problems = []
    codes = {0: 0, 2: 0}
    for path in _mutants(tmp, base):
        try:
            with open("/dev/null", "w") as null:
                saved = sys.stdout, sys.stderr
                sys.stdout = sys.stderr = null
                try:
                    code = cli_main._dispatch(["--config", str(path), "--dry-run"])
                finally:
                    sys.stdout, sys.stderr = saved
        except EvalHarnessError as exc:
            if exc.exit_code != 2 or not _located(exc):
                problems.append(f"{path.name}: exit {exc.exit_code}, {type(exc).__name__}: "
                                f"{exc.one_line()[:200]}")
            codes[2] += 1
            continue
        except BaseException as exc:  # an internal error: exit 70 at the CLI boundary
            problems.append(f"{path.name}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        if code != 0:
            problems.append(f"{path.name}: exit {code}")
        codes[0] += 1
    assert not problems, "\n".join(problems)
    assert codes[0] > 10 and codes[2] > 100  # the fuzz exercises both outcomes


@pytest.mark.parametrize("pick", [0, 1, 2])
def test_mutants_end_to_end_exit_0_or_2_without_traceback(
        example: tuple[Path, dict[str, Any]], pick: int) -> None:
    tmp, base = example
    rng = random.Random(SEED + 1 + pick)
    path = tmp / f"e2e{pick}.yaml"
    data = mutate(base, rng, tmp)
    if pick == 2:
        data["dataset"] = {"path": "/dev/zero"}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    proc = subprocess.run([sys.executable, str(ROOT / "orchestrate.py"), "--config", str(path),
                           "--dry-run"], capture_output=True, text=True, timeout=120, cwd=tmp)
    assert proc.returncode in (0, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:
        assert proc.stderr.startswith("error: ") or "\nerror: " in proc.stderr
