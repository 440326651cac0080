"""Six shapes of agent-eval-harness run directories give its condition means (to 1e-9),
without and with its eval.yaml; its "nothing scored is 0" rule behind --aeh-errors zero.

The expected means come from :func:`its_reward`, that tool's default composition written
here from its documentation (boolean judges gate; numeric judges normalised over their
declared range — the eval.yaml's, else the one recorded in summary.yaml, else [1, 5] —
clipped and averaged; only passing gates give 1; an errored judge is left out, and a case
where nothing scored but a judge errored is 0), then averaged over every case of every
run of a condition, as its analysis does.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import run_cli

Entry = dict[str, Any]


def its_reward(judges: dict[str, Entry], ranges: dict[str, tuple[float, float]]) -> float:
    numeric: list[float] = []
    errored = False
    for name, e in judges.items():
        v = e.get("value")
        if v is None:
            errored = errored or bool(e.get("error"))
            continue
        if v is False:
            return 0.0
        if v is True:
            continue
        lo, hi = ranges.get(name) or e.get("score_range") or (1.0, 5.0)
        numeric.append(min(1.0, max(0.0, (v - lo) / (hi - lo))))
    if numeric:
        return sum(numeric) / len(numeric)
    return 0.0 if errored else 1.0


def _write(root: Path, name: str, levels: dict[str, Any], per_case: dict[str, dict[str, Entry]],
           *, condition: bool = True) -> None:
    run = root / "my-eval" / name
    run.mkdir(parents=True)
    (run / "summary.yaml").write_text(yaml.safe_dump({"run_id": name, "per_case": per_case}))
    facts = {c: {"duration_s": 10.0 + i, "cost_usd": 0.01 * (i + 1),
                 "token_usage": {"input_tokens": 100, "output_tokens": 20 + i}}
             for i, c in enumerate(per_case)}
    (run / "run_result.json").write_text(json.dumps(
        {"model": levels.get("model", "m"), "cost_usd": 0.5, "per_case": facts}))
    if condition:
        (run / "condition.json").write_text(json.dumps({"condition_id": "x", "levels": levels}))


def _entry(value: Any, rng: list[float] | None = None, error: str | None = None) -> Entry:
    e: Entry = {"value": value, "rationale": f"because {value}",
                "judge_type": "boolean" if isinstance(value, bool) else "numeric"}
    if rng:
        e["score_range"] = rng
    if error:
        e["error"] = error
    return e


def _cases(seed: int, n: int = 4, *, absent: bool = False, errors: bool = False
           ) -> dict[str, dict[str, Entry]]:
    out = {}
    for i in range(n):
        q = (seed * 7 + i * 3) % 10  # 0..9 on a declared [0, 10]
        judges = {"ok": _entry((seed + i) % 3 != 0), "q": _entry(q, [0, 10])}
        if absent and i % 2:
            judges.pop("q")  # skipped by its `if`: no entry
        if errors and i == 1:
            judges = {"q": _entry(None, error="ScoreRangeError: 12 not in [0, 10]")}
        out[f"case-{i}"] = judges
    return out


SHAPES = {
    "bool-numeric": dict(factors={"model": ["a", "b"]}),
    "absent-judge": dict(factors={"model": ["a", "b"]}, absent=True),
    "errored-judges": dict(factors={"model": ["a", "b"]}, errors=True),
    "no-condition-json": dict(factors={"model": ["a", "b"]}, condition=False),
    "three-factors": dict(factors={"model": ["a", "b", "c"], "context": ["x", "y"],
                                   "effort": ["lo", "hi"]}),
    "replications": dict(factors={"model": ["a", "b"]}, reps=2),
}


def _make(root: Path, shape: str) -> dict[str, float]:
    spec = SHAPES[shape]
    factors: dict[str, list[Any]] = spec["factors"]  # type: ignore[assignment]
    expected: dict[str, list[float]] = {}
    for k, combo in enumerate(itertools.product(*factors.values())):
        levels = dict(zip(factors, combo, strict=True))
        for rep in range(int(spec.get("reps", 1))):  # type: ignore[call-overload]
            per_case = _cases(k * 5 + rep, absent=bool(spec.get("absent")),
                              errors=bool(spec.get("errors")))
            label = "-".join(f"{f}-{v}" for f, v in levels.items())
            _write(root, f"2026-07-30-{label}" + (f"-r{rep + 1}" if spec.get("reps") else ""),
                   levels, per_case, condition=bool(spec.get("condition", True)))
            key = json.dumps(levels, sort_keys=True)
            expected.setdefault(key, []).extend(its_reward(j, {}) for j in per_case.values())
    return {k: sum(v) / len(v) for k, v in expected.items()}


def _means(out: str, factors: list[str]) -> dict[str, float]:
    anova = json.loads(out)
    return {json.dumps({f: c["levels"][f] for f in factors}, sort_keys=True): c["mean"]
            for c in anova["condition_summaries"]}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("with_config", [False, True])
def test_condition_means_equal_its_means(tmp_path: Path, shape: str, with_config: bool) -> None:
    want = _make(tmp_path / "runs", shape)
    factors = list(SHAPES[shape]["factors"])  # type: ignore[arg-type]
    argv = ["--analyze-only", str(tmp_path / "runs" / "my-eval"), "--json", "--no-report",
            "--output", str(tmp_path / "out"), "--aeh-errors", "zero"]
    if with_config:
        cfg = tmp_path / "eval.yaml"
        cfg.write_text(yaml.safe_dump({"name": "my-eval", "judges": [
            {"name": "ok", "check": "return True, ''"},
            {"name": "q", "check": "return 1, ''", "score_range": [0, 10]}]}))
        argv += ["--config", str(cfg)]
    code, out, err = run_cli(*argv)
    assert code == 0, err
    got = _means(out, factors)
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-9), key
    assert "a case where nothing scored is 0, as agent-eval-harness" in out + err


def test_default_rule_excludes_what_it_scores_zero_and_says_so(tmp_path: Path) -> None:
    _make(tmp_path / "runs", "errored-judges")
    code, out, err = run_cli("--analyze-only", str(tmp_path / "runs" / "my-eval"), "--json",
                             "--no-report", "--output", str(tmp_path / "out"))
    assert code == 0, err
    got = _means(out, ["model"])
    for k, model in enumerate(["a", "b"]):  # case-1 is errored here (0 there): left out
        kept = [its_reward(j, {}) for c, j in _cases(k * 5, errors=True).items() if c != "case-1"]
        assert got[json.dumps({"model": model})] == pytest.approx(sum(kept) / 3, abs=1e-9)
    assert "a case where nothing scored is errored (excluded), not 0" in out + err


def test_one_warning_line_names_judges_of_unknown_range(tmp_path: Path) -> None:
    per_case = {"c1": {"q": {"value": 4}, "r": {"value": 2, "score_range": [0, 2]}},
                "c2": {"q": {"value": 2}, "r": {"value": 1, "score_range": [0, 2]}}}
    _write(tmp_path / "runs", "run-a", {"model": "a"}, per_case)
    _write(tmp_path / "runs", "run-b", {"model": "b"}, per_case)
    code, _, err = run_cli("--analyze-only", str(tmp_path / "runs" / "my-eval"), "--json",
                           "--no-report", "--output", str(tmp_path / "out"))
    assert code == 0, err
    lines = [line for line in err.splitlines() if "states no score_range" in line]
    assert lines == ["warning: summary.yaml states no score_range for q: normalised over "
                     "[1, 5] (its default); pass its eval.yaml as --config for the declared "
                     "ranges"]


def test_per_case_cost_latency_tokens_come_from_run_result(tmp_path: Path) -> None:
    from eval_harness.analysis.loading.tidy_frame import load_runs

    _make(tmp_path / "runs", "bool-numeric")
    frame = load_runs(tmp_path / "runs")
    rows = frame[(frame["judge"] == "composite") & (frame["case_id"] == "case-2")]
    assert list(rows["latency_s"]) == [12.0, 12.0]
    assert rows["cost_usd"].tolist() == pytest.approx([0.03, 0.03])
    assert list(rows["tokens"]) == [122.0, 122.0]


def test_three_level_factor_gets_the_gg_correction_it_misses(tmp_path: Path) -> None:
    # pingouin 0.7: rm_anova(d, dv="y", within="ctx", subject="case", correction=True) ->
    # F = 12.0992, eps = 0.5993, p_unc = 0.0021378, p_GG_corr = 0.0115335. Its anova step
    # looks for a "p-GG-corr" column (pingouin < 0.7), misses it and reports p_unc.
    y = {"c1": [.2, .4, .9], "c2": [.3, .5, .6], "c3": [.1, .6, .95], "c4": [.4, .45, .5],
         "c5": [.2, .7, 1.0], "c6": [.35, .4, .55]}
    for i, level in enumerate("abc"):
        _write(tmp_path / "runs", f"run-{level}", {"model": "m", "ctx": level},
               {c: {"q": _entry(v[i], [0, 1])} for c, v in y.items()})
    code, out, err = run_cli("--analyze-only", str(tmp_path / "runs" / "my-eval"), "--json",
                             "--no-report", "--output", str(tmp_path / "out"))
    assert code == 0, err
    term = json.loads(out)["terms"]["ctx"]
    assert term["F"] == pytest.approx(12.099165894346616, abs=1e-9)
    assert term["gg_epsilon"] == pytest.approx(0.5993216301056624, abs=1e-9)
    assert term["p_uncorrected"] == pytest.approx(0.0021378409547447453, abs=1e-12)
    assert term["p_raw"] == pytest.approx(0.011533523642197863, abs=1e-12)
