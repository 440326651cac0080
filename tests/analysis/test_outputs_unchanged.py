"""Outputs unchanged: anova.json, the comparisons (summary and every per-case row) and
leaderboard.json of fixed run sets equal golden copies produced by the code before the
analysis was made fast (commit b8b74bb).

Run sets (tests/analysis/golden_data.py): the bundled example's real runs with its config
(``--per-judge`` on), a synthetic tagged run set (tier / domain / cluster tags, errors, an
incomplete and a modified case, 3 replications), and the agent-eval-harness fixture runs
without a config. Numbers must agree to a relative 1e-12 (absolute 1e-15 near zero);
every other value exactly. Fields added since the capture are allowed (the golden copy must
be contained in the output), so new statistics do not break this test; changed numbers do.

One exception, the Monte Carlo bootstrap bounds (``overall.bootstrap_ci``): since the
bootstrap draws one binomial per (n, k) group instead of one per case (same law, see
compare/bootstrap.py) they come from another random stream. They are compared within
``BOOT_TOL`` × the golden interval width: the Monte Carlo SE of a 2.5% / 97.5% percentile
of B = 2,000 resamples is √(0.025·0.975/B)/φ(1.96) ≈ 0.06σ ≈ 0.015 × width (width ≈ 3.92σ),
so the difference of two independent streams has SE ≈ 0.022 × width and 0.15 × width is
≈ 7 SE; it also covers the one-lattice-step moves of these small run sets, whose T* lives
on a lattice (steps of 1/64 on widths ≥ 0.17 in the example: ≤ 0.091 × width). A
degenerate (zero-width) interval is deterministic and stays compared at 1e-12.

Regenerate ONLY when a number is meant to change (say why in the commit):
``EVAL_HARNESS_REGEN_GOLDEN=1 python -m pytest tests/analysis/test_outputs_unchanged.py``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.golden_data import GOLDEN, TAGGED_CONFIG, write_example, write_tagged
from tests.conftest import FIXTURES, ROOT, run_cli

REL, ABS = 1e-12, 1e-15
BOOT_TOL = 0.15  # × golden bootstrap CI width (module docstring)
SKIP_KEYS = {"generated_at"}


def read_comparisons(out: Path) -> dict[str, Any]:
    """comparisons.json with every comparison's per-case rows in ``cases`` (the rows may
    live in a JSON Lines file beside it, see docs/reports.md)."""
    from eval_harness.analysis.compare.files import read_comparisons as read

    return read(out)


def _outputs(out: Path, root: Path) -> dict[str, Any]:
    docs = {
        "anova": json.loads((out / "anova.json").read_text()),
        "comparisons": read_comparisons(out),
        "leaderboard": json.loads((out / "leaderboard.json").read_text()),
    }
    # paths of the temporary run directories vary between runs of the test
    text = json.dumps(docs).replace(str(root.resolve()), "<ROOT>").replace(str(root), "<ROOT>")
    return json.loads(text)


def _contained(golden: Any, actual: Any, where: str, problems: list[str]) -> None:
    if len(problems) > 20:
        return
    if where.endswith(".overall.bootstrap_ci") and isinstance(golden, list) \
            and len(golden) == 2 and isinstance(actual, list) and len(actual) == 2:
        tol = BOOT_TOL * abs(golden[1] - golden[0]) + ABS
        if any(abs(a - g) > tol for a, g in zip(actual, golden, strict=True)):
            problems.append(f"{where}: {actual!r} != golden {golden!r} (Monte Carlo tol {tol})")
        return
    if isinstance(golden, dict):
        if not isinstance(actual, dict):
            problems.append(f"{where}: expected an object, got {type(actual).__name__}")
            return
        for key, value in golden.items():
            if key in SKIP_KEYS:
                continue
            if key not in actual:
                problems.append(f"{where}.{key}: missing")
            else:
                _contained(value, actual[key], f"{where}.{key}", problems)
    elif isinstance(golden, list):
        if not isinstance(actual, list) or len(actual) != len(golden):
            problems.append(f"{where}: expected a list of {len(golden)}, got {actual!r:.200}")
            return
        for i, (g, a) in enumerate(zip(golden, actual, strict=True)):
            _contained(g, a, f"{where}[{i}]", problems)
    elif isinstance(golden, float) and not isinstance(actual, bool) \
            and isinstance(actual, (int, float)):
        if not math.isclose(golden, actual, rel_tol=REL, abs_tol=ABS):
            problems.append(f"{where}: {actual!r} != golden {golden!r}")
    elif golden != actual or type(golden) is not type(actual):
        problems.append(f"{where}: {actual!r:.200} != golden {golden!r:.200}")


def _check(name: str, docs: dict[str, Any]) -> None:
    path = GOLDEN / f"{name}.json"
    if os.environ.get("EVAL_HARNESS_REGEN_GOLDEN") == "1":
        path.write_text("{\n" + ",\n".join(
            f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in docs.items()
        ) + "\n}\n")
    golden = json.loads(path.read_text())
    problems: list[str] = []
    _contained(golden, docs, name, problems)
    assert not problems, "\n".join(problems)


def _analyse(runs: Path, out: Path, *extra: str) -> None:
    # --method rm: the golden copies were captured when rm was the default; the default is
    # now auto (rm when complete, else the random-slopes model; issue 15), which would
    # change the tagged set's numbers (an incomplete case) and add the choice to the notes
    code, _, err = run_cli("--analyze-only", str(runs), "--output", str(out), "--json",
                           "--method", "rm", *extra)
    assert code == 0, err


def test_example_outputs_unchanged(tmp_path: Path) -> None:
    runs = write_example(tmp_path / "runs")
    _analyse(runs, tmp_path / "out", "--config", str(ROOT / "configs" / "example.yaml"),
             "--per-judge")
    _check("example", _outputs(tmp_path / "out", tmp_path))


def test_tagged_outputs_unchanged(tmp_path: Path) -> None:
    runs = write_tagged(tmp_path / "runs")
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(TAGGED_CONFIG)
    _analyse(runs, tmp_path / "out", "--config", str(cfg), "--reference", "model=large,prompt=cot")
    docs = _outputs(tmp_path / "out", tmp_path)
    # the run set exercises what it claims to
    assert docs["leaderboard"]["strata"]["tag"] == "tier"
    assert docs["comparisons"]["cluster_key"] == "cluster"
    assert docs["anova"]["excluded_cases"], "case-007 is incomplete"
    assert any(c["modified"] for c in docs["comparisons"]["comparisons"])
    _check("tagged", docs)


def test_aeh_outputs_unchanged(tmp_path: Path) -> None:
    _analyse(FIXTURES / "aeh_runs", tmp_path / "out")
    docs = _outputs(tmp_path / "out", FIXTURES / "aeh_runs")
    _check("aeh", docs)


@pytest.mark.parametrize("name", ["example", "tagged", "aeh"])
def test_golden_copies_hold_per_case_rows(name: str) -> None:
    golden = json.loads((GOLDEN / f"{name}.json").read_text())
    comps = golden["comparisons"]["comparisons"]
    assert comps and all(c["cases"] for c in comps)
