"""agent-eval-harness's anova.json consumers render our anova.json.

``render`` is a small consumer written from that tool's documented anova.json fields (the
artifact its /eval-anova report and /eval-compare read: ``anova`` with ``factor``,
``f_statistic``, ``p_value``, ``significant`` for one factor or per-term ``p_values`` /
``p_adjusted`` / ``significant`` / ``correction`` / ``family_size`` for several;
``condition_summaries`` with flattened levels, ``mean``, ``std``, ``n``; ``pareto_frontier``
with ``cost``; ``design.n_cases``), not from its code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.rundir_writer import write_aeh
from tests.conftest import FIXTURES, run_cli


def render(doc: dict[str, Any]) -> dict[str, Any]:
    """What such a report shows: significant terms, ranked means, the frontier."""
    an = doc["anova"]
    sig = an.get("significant")
    if isinstance(sig, dict):  # several factors: one row per term
        rows = {t: (an["p_values"][t], an["p_adjusted"][t], sig[t]) for t in an["p_values"]}
        significant = sorted(t for t, (_, _, s) in rows.items() if s)
        header = f"{an['correction']} family of {an['family_size']}"
    else:
        significant = [an["factor"]] if sig else []
        header = f"F={an['f_statistic']} p={an['p_value']}"
    ranked = sorted(doc["condition_summaries"], key=lambda c: -(c.get("mean") or 0))
    return {"significant": significant, "header": header,
            "ranked": [(c.get("model"), c["mean"], c["std"], c["n"]) for c in ranked],
            "frontier": [(c.get("model"), c.get("cost")) for c in doc["pareto_frontier"]],
            "n_cases": doc["design"]["n_cases"]}


def _analyse(runs: Path, out: Path) -> dict[str, Any]:
    code, stdout, err = run_cli("--analyze-only", str(runs), "--output", str(out), "--json")
    assert code == 0, err
    return json.loads(stdout)


def test_two_factors_render_the_significant_terms(tmp_path: Path) -> None:
    # model matters a lot and consistently across cases; effort adds noise only
    data: dict[tuple[str, ...], dict[str, list[dict[str, Any]]]] = {}
    for model, base in (("m-good", 4.5), ("m-bad", 1.5)):
        for effort, bump in (("low", 0.0), ("high", 0.25)):
            data[(model, effort)] = {
                f"c{i}": [{"q": base + bump * (1 if i % 2 else -1) + (i % 3) * 0.1
                           + (0.07 * i if model == "m-good" else 0.0)}]
                for i in range(8)}
    write_aeh(tmp_path / "runs", data, ["model", "effort"])
    doc = _analyse(tmp_path / "runs", tmp_path / "o")
    view = render(doc)
    assert view["significant"] == ["model"]
    assert doc["terms"]["model"]["significant"] is True  # our field agrees
    assert not doc["terms"]["effort"]["significant"]
    assert view["header"] == "holm family of 3"
    assert view["ranked"][0][0] == "m-good" and view["n_cases"] == 8
    assert len(view["frontier"]) >= 1  # run costs known: a real frontier


def test_one_factor_renders_f_and_p(tmp_path: Path) -> None:
    doc = _analyse(FIXTURES / "aeh_sample_runs", tmp_path / "o")
    view = render(doc)
    assert view["significant"] == []  # p = 0.141
    assert doc["anova"]["factor"] == "context"
    assert doc["anova"]["f_statistic"] == pytest.approx(75 / 19)
    # generalised eta squared SS_A / (SS_A + SS_case + SS_AxCase) = 0.1953 / (0.1953 + 0.8359 +
    # 0.1484) = 0.1656; R: afex::aov_ez("case", "y", d, within = "context")$anova_table$ges
    assert doc["anova"]["details"][0]["ng2"] == pytest.approx(
        0.1953125 / (0.1953125 + 0.8359375 + 0.1484375), abs=1e-9)
    means = {c["context"]: (c["mean"], c["n"], c["std"]) for c in doc["condition_summaries"]}
    assert means["cognee"][:2] == (0.625, 4) and means["none"][:2] == (0.3125, 4)
    # its std: sample sd of the per-case composites (statistics.stdev([1, .75, .75, 0]))
    assert means["cognee"][2] == pytest.approx(0.4330127018922193)
    assert doc["per_case"]["context=cognee, model=claude-sonnet-4-6"]["task-0034"] == 0.0


def find_artifact(path: Path) -> Path:
    """Its documented lookup: an anova.json file, a directory holding one, else the first
    found below the directory."""
    if path.is_file():
        return path
    if (path / "anova.json").is_file():
        return path / "anova.json"
    return sorted(path.rglob("anova.json"))[0]


def test_consumers_find_it_beside_the_runs_with_adjusted_p(tmp_path: Path) -> None:
    data: dict[tuple[str, ...], dict[str, list[dict[str, Any]]]] = {}
    for model, base in (("m-good", 4.0), ("m-bad", 2.0)):
        for effort in ("low", "high"):
            for ctx in ("none", "docs"):
                data[(model, effort, ctx)] = {
                    f"c{i}": [{"q": base + (i % 4) * 0.3 + (0.2 if ctx == "docs" and i % 2 else 0)}]
                    for i in range(6)}
    eval_dir = tmp_path / "runs" / "my-eval"
    write_aeh(eval_dir, data, ["model", "effort", "context"])
    code, _, err = run_cli("--analyze-only", str(eval_dir), "--output", str(tmp_path / "o"),
                           "--no-report")
    assert code == 0, err
    artifact = find_artifact(eval_dir)
    assert artifact == eval_dir / "anova.json"  # where its analyze step writes it
    doc = json.loads(artifact.read_text())
    assert doc == json.loads((tmp_path / "o" / "anova.json").read_text())
    an, view = doc["anova"], render(doc)
    assert view["significant"] == ["model"]
    assert an["correction"] == "holm" and an["family_size"] >= 2
    for term, p in an["p_values"].items():  # the p shown is the one the verdict used
        assert p == doc["terms"][term]["p_adjusted"]
        assert an["p_values_raw"][term] == doc["terms"][term]["p_raw"]
        assert an["significant"][term] == (p < an["alpha"])
    assert any(an["p_values"][t] > an["p_values_raw"][t] for t in an["p_values"])


def test_an_unwritable_runs_tree_gets_a_warning_not_a_failure(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "aeh_sample_runs" / "anova-example", runs)
    (runs / "anova.json").unlink(missing_ok=True)  # an earlier analysis of the fixture
    (runs / "anova.json").mkdir()  # cannot be written (also as root, unlike a chmod)
    code, _, err = run_cli("--analyze-only", str(runs), "--output", str(tmp_path / "o"),
                           "--no-report")
    assert code == 0, err
    assert f"warning: could not write {runs / 'anova.json'}" in err
    assert (tmp_path / "o" / "anova.json").is_file()
