"""One core, many doors (issue 32): the CLI (``--analyze-only``, its files), the Python
API (``eval_harness.analyze``) and the dashboard (``serve.evaldata.EvalCache``) show the
same per-condition pass rates and means, leaderboard, verdicts (per case and per
comparison) and excluded conditions, on

(a) the bundled example (``--limit 6``) with ``matrix.analysis.pass_mark: 0.9`` and a gate
    judge (the dashboard used to ignore both in its report and to leave out comparisons);
(b) agent-eval-harness run directories (the bundled sample runs, and runs with cases
    where nothing could be scored), with and without ``--aeh-errors zero``;
(c) runs whose config dropped a level (the recorded config no longer has it: every door
    leaves those conditions out and lists them).

Each door is read through its own public surface only; :func:`_view` reduces what it
shows to one comparable value.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT, run_cli

EXAMPLE = ROOT / "configs" / "example.yaml"


def _r(x: Any) -> Any:
    return None if x is None else float(x)


def _close(a: Any, b: Any) -> bool:
    """Equal, numbers to 1e-9 (report.json rounds to 10 significant digits)."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _levels_key(levels: dict[str, Any]) -> str:
    return json.dumps({k: str(v) for k, v in levels.items()}, sort_keys=True)


def _text(rule: Any) -> Any:
    """A pass rule's text (documents hold it as text or as {"text": ...})."""
    return rule.get("text") if isinstance(rule, dict) else rule


def _view(anova: dict[str, Any], leaderboard: dict[str, Any] | None,
          report: dict[str, Any] | None, verdicts: dict[str, str],
          comparisons: dict[str, str] | None) -> dict[str, Any]:
    """What a door shows, reduced to comparable plain values (None: that door does not
    show it; compared where two doors do)."""
    board = leaderboard or {}
    return {  # compared in this order: the first difference is the one reported
        "pass_rates": None if report is None else {
            c["condition_id"]: _r(c.get("pass_rate")) for c in report["conditions"]},
        "report_means": None if report is None else {
            c["condition_id"]: _r(c.get("mean")) for c in report["conditions"]},
        "means": {_levels_key(s["levels"]): _r(s["mean"])
                  for s in anova.get("condition_summaries") or []},
        "leaderboard": [(c["condition_id"], c.get("rank"), _r(c.get("pass_rate")),
                         _r((c.get("quality") or {}).get("mean")))
                        for c in board.get("conditions") or []],
        "leader_pass_rule": _text(board.get("pass_rule")),
        "report_pass_rule": None if report is None else _text(report.get("pass_rule")),
        "verdicts": verdicts,
        "grid_verdicts": None if report is None else _report_verdicts(report),
        "comparisons": comparisons,
        # absent (not listed at all) is not the same as none excluded
        "excluded": "absent" if "excluded_conditions" not in anova else sorted(
            _levels_key(c["levels"]) for c in anova["excluded_conditions"]),
        "anova_fields": sorted(anova),  # agent-eval-harness's fields included
    }


def _case_verdicts_of_comparisons(doc: dict[str, Any]) -> dict[str, str]:
    """(condition, case) -> verdict from a comparisons document's per-case rows."""
    out: dict[str, str] = {}
    for comp in doc.get("comparisons") or []:
        for row in comp.get("cases") or []:
            for side in ("reference", "candidate"):
                cid = comp[side].get("condition_id")
                if row.get(side) and cid:
                    out[f"{cid}|{row['case_id']}"] = row[side]["verdict"]
    return out


def _comparison_verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {f"{c['kind']}|{c['candidate']['condition_id']}": c["verdict"]
            for c in doc.get("comparisons") or []}


def _report_verdicts(report: dict[str, Any]) -> dict[str, str]:
    grid = report.get("case_grid") or {}
    return {f"{cid}|{case['case_id']}": cell["verdict"]
            for case in grid.get("cases") or [] for cid, cell in case["cells"].items()}


def cli_view(runs: Path, out: Path, *flags: str) -> dict[str, Any]:
    """The CLI: ``--analyze-only`` and the files it wrote."""
    from eval_harness.analysis.compare.files import read_comparisons

    code, _, err = run_cli("--analyze-only", str(runs), "--output", str(out), *flags)
    assert code == 0, err
    anova = json.loads((out / "anova.json").read_text())
    report = json.loads((out / "report.json").read_text())
    comparisons = read_comparisons(out)
    return _view(anova, json.loads((out / "leaderboard.json").read_text()), report,
                 _case_verdicts_of_comparisons(comparisons), _comparison_verdicts(comparisons))


def api_view(runs: Path, out: Path, **kwargs: Any) -> dict[str, Any]:
    """The Python API: ``eval_harness.analyze``."""
    import eval_harness

    a = eval_harness.analyze(runs, output=out, **kwargs)
    return _view(a.anova, a.leaderboard, None, _case_verdicts_of_comparisons(a.comparisons),
                 _comparison_verdicts(a.comparisons))


def dashboard_view(root: Path, options: Any = None) -> dict[str, Any]:
    """The dashboard: the analysis its pages render (``EvalCache``, one eval under
    ``root``)."""
    from eval_harness.serve.catalog import Catalog
    from eval_harness.serve.evaldata import EvalCache

    cache = EvalCache(wait_s=300) if options is None else EvalCache(wait_s=300, options=options)
    try:
        (entry,) = Catalog([root]).entries().values()
        got = cache.lookup(entry)
        assert got.data is not None, got.error
        data = got.data
    finally:
        cache.close()
    verdicts = {f"{r.condition_id}|{r.case_id}": r.verdict
                for r in data.cases[["condition_id", "case_id", "verdict"]].astype(str)
                .itertuples()}
    comparisons = {f"{c['kind']}|{c['candidate_id']}": c["verdict"]
                   for c in data.report.get("comparisons") or []}
    return _view(data.anova, data.leaderboard, data.report, verdicts, comparisons)


def assert_same(*views: dict[str, Any]) -> None:
    """Every shown field equal across the doors that show it."""
    names = ("cli", "api", "dashboard")
    for key in views[0]:
        shown = [(n, v[key]) for n, v in zip(names, views, strict=False) if v[key] is not None]
        for name, value in shown[1:]:
            if not _close(value, shown[0][1]):
                assert value == shown[0][1], f"{key}: {shown[0][0]} != {name}"


def _doors(runs: Path, tmp: Path, *, cli: tuple[str, ...] = (), api: dict[str, Any] | None = None,
           options: Any = None) -> list[dict[str, Any]]:
    return [cli_view(runs, tmp / "cli", *cli), api_view(runs, tmp / "api", **(api or {})),
            dashboard_view(runs.parent, options)]


# --- (a) the example with pass_mark 0.9 and a gate judge ---------------------------------

def _example_config(folder: Path, models: list[str] | None = None) -> Path:
    cfg = yaml.safe_load(EXAMPLE.read_text())
    cfg["matrix"]["analysis"]["pass_mark"] = 0.9
    cfg["composite"]["gates"] = ["correct"]
    if models is not None:
        cfg["matrix"]["factors"]["model"] = models
    if not (folder / "example").exists():
        shutil.copytree(ROOT / "configs" / "example", folder / "example")
    path = folder / ("eval.yaml" if models is None else "dropped.yaml")
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/example/ of the example (--limit 6) with pass_mark 0.9 and gate `correct`."""
    root = tmp_path_factory.mktemp("parity-example")
    code, _, err = run_cli("--config", str(_example_config(root)), "--runs-dir",
                           str(root / "runs"), "--limit", "6", "--no-analysis")
    assert code == 0, err
    return root / "runs" / "example"


def test_example_with_pass_mark_and_gate(example_runs: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs" / "example"
    shutil.copytree(example_runs, runs)
    views = _doors(runs, tmp_path)
    assert_same(*views)
    rule = views[0]["leader_pass_rule"]
    assert "gate judges: correct" in rule and "0.9" in rule
    assert len(views[0]["pass_rates"]) == 8 and not views[0]["excluded"]


# --- (c) a level dropped from the config --------------------------------------------------

def test_runs_whose_config_dropped_a_level(example_runs: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs" / "example"
    shutil.copytree(example_runs, runs)
    # the same eval run again with one model only: nothing runs, the recorded config
    # (which --analyze-only, the API and the dashboard all read) has no example-large
    cfg = _example_config(tmp_path, models=["example-small"])
    code, _, err = run_cli("--config", str(cfg), "--runs-dir", str(tmp_path / "runs"),
                           "--limit", "6", "--no-analysis")
    assert code == 0, err
    views = _doors(runs, tmp_path)
    assert_same(*views)
    assert len(views[0]["excluded"]) == 4 and len(views[0]["means"]) == 4
    assert all("example-large" in key for key in views[0]["excluded"])


# --- (b) agent-eval-harness run directories -----------------------------------------------

def _aeh_runs(root: Path) -> Path:
    """Four agent-eval-harness runs (model a/b x two replications) of five cases, where
    one case per run has nothing scored but an errored judge (its rule: 0; ours by
    default: errored, left out)."""
    from eval_harness.matrix.ids import condition_id

    for k, (model, rep) in enumerate([("a", 1), ("a", 2), ("b", 1), ("b", 2)]):
        run = root / "my-eval" / f"2026-07-30-model-{model}-r{rep}"
        run.mkdir(parents=True)
        per_case: dict[str, Any] = {}
        for i in range(5):
            q = (k * 7 + i * 3) % 11
            per_case[f"case-{i}"] = {
                "ok": {"value": (k + i) % 3 != 0, "judge_type": "boolean"},
                "q": {"value": q, "score_range": [0, 10], "judge_type": "numeric"},
            }
        per_case["case-1"] = {"q": {"value": None, "error": "ScoreRangeError: 12 not in [0, 10]"}}
        (run / "summary.yaml").write_text(yaml.safe_dump({"run_id": run.name,
                                                          "per_case": per_case}))
        (run / "condition.json").write_text(json.dumps(
            {"condition_id": condition_id({"model": model}), "levels": {"model": model}}))
        (run / "run_result.json").write_text(json.dumps({"model": model, "cost_usd": 0.1}))
    return root / "my-eval"


@pytest.mark.parametrize("errors", ["exclude", "zero"])
@pytest.mark.parametrize("which", ["sample", "unscored"])
def test_agent_eval_harness_runs(tmp_path: Path, which: str, errors: str) -> None:
    options = None  # the dashboard's default: as --analyze-only without flags
    if errors != "exclude":  # `serve --aeh-errors zero`
        from eval_harness.app.options import AnalysisOptions

        options = AnalysisOptions(aeh_errors=errors)
    if which == "sample":
        runs = tmp_path / "in" / "aeh"
        shutil.copytree(FIXTURES / "aeh_runs", runs)
    else:
        runs = _aeh_runs(tmp_path / "in")
    views = _doors(runs, tmp_path, cli=("--aeh-errors", errors), api={"aeh_errors": errors},
                   options=options)
    assert_same(*views)
    if which == "unscored":  # the option reaches every door: 0 lowers the means
        other = "zero" if errors == "exclude" else "exclude"
        flipped = api_view(runs, tmp_path / "other", aeh_errors=other)
        assert flipped["means"] != views[0]["means"]
