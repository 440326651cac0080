"""Dataset lint findings."""

from __future__ import annotations

from pathlib import Path

from judge_helpers import write_experiment

from eval_harness.cli.main import main
from eval_harness.config.dataset import Case
from eval_harness.judges.lint import lint_dataset

CASES = [
    Case("a", {"q": "Who discovered radium?"},
         {"answer": "Marie Curie and Pierre Curie discovered it in 1898.",
          "entities": ["Marie Curie", "1898", "Sorbonne"]}, {"tier": "simple", "domain": "science"}),
    Case("b", {"q": "who  discovered RADIUM?"}, {"answer": "x", "entities": []},
         {"tier": "hard", "domain": "science"}),
    Case("c", {"q": "Capital of Atlantis?"}, {"answer": "Not in the sources.", "absent": True,
                                              "entities": ["Atlantis"]},
         {"tier": "simple", "domain": "geo"}),
    Case("d", {"q": "Capital of Peru?"}, {"entities": ["Lima"]}, {"tier": "simple", "domain": "geo"}),
]


def test_findings() -> None:
    found = lint_dataset(CASES)
    assert any("'Sorbonne' is not a literal substring" in f and "case a" in f for f in found)
    assert not any("'Marie Curie'" in f for f in found)
    assert any("case c: absence item" in f for f in found)
    assert any("case d: entities given but no reference answer" in f for f in found)
    assert any("duplicate inputs: cases a, b" in f for f in found)
    assert any("domain=geo appears only in tier=simple" in f for f in found)
    assert not any("domain=science" in f for f in found)
    assert len(found) == 5


def test_clean_dataset_has_no_findings() -> None:
    assert lint_dataset([Case("z", {"q": "x"}, {"answer": "Paris", "entities": ["Paris"]})]) == []


def test_lint_cli_exit_codes(tmp_path: Path, capsys: object) -> None:
    bad = [{"id": "a", "input": {"q": "x"}, "expected": {"answer": "Paris", "entities": ["Lyon"]}}]
    config = write_experiment(tmp_path, [{"name": "e", "entity_coverage": True}], bad)
    assert main(["--config", str(config), "--lint"]) == 1
    good = [{"id": "a", "input": {"q": "x"}, "expected": {"answer": "Paris", "entities": ["Paris"]}}]
    config = write_experiment(tmp_path, [{"name": "e", "entity_coverage": True}], good)
    assert main(["--config", str(config), "--lint", "--json"]) == 0
