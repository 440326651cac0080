"""docs/architecture.md stays true to the code: its layer table is tests/test_layers.py's
LAYERS, every module it names exists, its two paths ("how does a cell run", "how is
anova.json built") name at most 10 modules each, and its worked run-format example runs.
Also: no doc (README.md, docs/*.md) names an ``eval_harness`` module, test or bench file
that does not exist."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest

from eval_harness.analysis.loading import formats
from eval_harness.analysis.loading.tidy_frame import load_runs
from tests.conftest import ROOT
from tests.test_layers import LAYERS

DOC = ROOT / "docs" / "architecture.md"
PKG = ROOT / "eval_harness"


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def _section(title: str) -> str:
    text = _text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start: end if end != -1 else len(text)]


def _exists(rel: str) -> bool:
    """``rel`` (``runner/engine``, ``analysis/loading/``, ``pricing/prices.json``) is a
    module, a package or a file under eval_harness/."""
    path = PKG / rel.rstrip("/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or (
        path.suffix != "" and path.is_file())


def _named_modules(text: str) -> list[str]:
    """Every backticked ``pkg/...`` path whose first part is a package of the layer map
    (a trailing ``.name`` after a module is an attribute: ``judges/scorer.build_scorer``)."""
    found = []
    for token in re.findall(r"`([A-Za-z_][\w/.]*?/[\w/.]*)`", text):
        first = token.split("/")[0]
        if first not in LAYERS or first == "":
            continue
        head, _, tail = token.rpartition("/")
        module = f"{head}/{tail.split('.')[0]}" if "." in tail and not tail.endswith(
            ".json") else token
        found.append(module)
    return found


def _dotted_ok(dotted: str) -> bool:
    """``eval_harness.x.y`` is a module or package, or a module and one name it defines."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else \
            base / "__init__.py"
        if source.is_file():
            rest = parts[i:]
            if not rest:
                return True
            if len(rest) > 1:
                return False
            name = re.escape(rest[0])
            return re.search(rf"^\s*(?:async def|def|class) {name}\b|^{name}\s*[:=]|"
                             rf"import .*\b{name}\b|^\s+{name}\b", source.read_text(
                                 encoding="utf-8"), re.M) is not None
    return False


def test_the_layer_table_is_the_layer_contracts() -> None:
    block = re.search(r"<!-- layers: begin.*?-->\n(.*?)<!-- layers: end -->", _text(), re.S)
    assert block, "docs/architecture.md lost its layer table markers"
    table: dict[str, int] = {}
    for row in block.group(1).splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].isdigit():
            continue
        for name in re.findall(r"`([^`]+)`", cells[1]):
            table["" if name == "__init__" else name] = int(cells[0])
    assert table == LAYERS


def test_every_package_of_the_layer_map_has_a_paragraph() -> None:
    paragraphs = _section("The layer map")
    missing = [name for name in LAYERS if name and f"**`{name}`**" not in paragraphs]
    assert missing == []


def test_every_module_named_in_the_architecture_doc_exists() -> None:
    named = _named_modules(_text())
    assert len(named) > 40  # the doc names modules, and this test sees them
    assert [m for m in named if not _exists(m)] == []


@pytest.mark.parametrize("title", ["How does a cell run", "How is anova.json built"])
def test_each_path_names_at_most_ten_modules_that_exist(title: str) -> None:
    steps = re.findall(r"^\d+\. `([^`]+)`", _section(title), re.M)
    assert 5 <= len(steps) <= 10
    assert [m for m in steps if not _exists(m)] == []


def test_the_worked_run_format_example_runs(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    code = re.search(r"```python\n(# mytool_format\.py\n.*?)```", _text(), re.S)
    assert code, "the worked run-format example is gone"
    (tmp_path / "mytool_format.py").write_text(code.group(1), encoding="utf-8")
    monkeypatch.setattr(formats, "_FORMATS", dict(formats._FORMATS))  # registered here only
    for model, passed in (("a", [True, True, False, True]), ("b", [False, True, False, False])):
        run = tmp_path / "runs" / f"run-{model}"
        run.mkdir(parents=True)
        (run / "results.json").write_text(json.dumps(
            {"levels": {"model": model}, "passed": {f"c{i}": p for i, p in enumerate(passed)}}))
    runpy.run_path(str(tmp_path / "mytool_format.py"))
    frame = load_runs(tmp_path / "runs")
    assert frame.attrs["formats"] == ["mytool"]
    means = frame[frame.judge == "composite"].groupby("model", observed=True)["value"].mean()
    assert means.to_dict() == {"a": 0.75, "b": 0.25}


#: strings in docs that look like module paths but are not meant to import as written: a
#: persisted module path (resolved by eval_harness/judges/moved.py), a document ``kind``
NOT_MODULES = frozenset({"eval_harness.judges.aeh_builtins", "eval_harness.report"})


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_no_doc_names_a_module_or_file_that_is_gone() -> None:
    gone: list[str] = []
    path_re = re.compile(r"(?<![\w/.-])((?:eval_harness|tests|bench)/[\w./-]*[\w])")
    dotted_re = re.compile(r"(?<![\w/.-])eval_harness(?:\.[A-Za-z_]\w*)+")
    for doc in _docs():
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in path_re.finditer(line):
                path = ROOT / m.group(1)
                if not (path.exists() or path.with_suffix(".py").is_file()):
                    gone.append(f"{doc.name}:{n}: {m.group(1)}")
            for m in dotted_re.finditer(line):
                if m.group(0) not in NOT_MODULES and not _dotted_ok(m.group(0)):
                    gone.append(f"{doc.name}:{n}: {m.group(0)}")
    assert gone == []
