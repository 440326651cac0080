"""The layer contract of eval_harness (issue 32): read every module's source (AST, nothing is
imported), collect every import of an eval_harness module — module-level AND function-level —
and check that

(a) each package imports only its own or lower layers (``LAYERS`` below is the one place the
    layer map is written down; docs/architecture.md mirrors it), and two siblings of one layer
    that must stay apart (``APART``) do not import each other;
(b) the core (layers 0-6) never imports ``eval_harness.aeh``, and nothing outside ``cli/``
    imports ``cli/``;
(c) there are no import cycles, at module granularity, function-level imports included (a
    package ``__init__`` that re-exports is a module like any other: ``from eval_harness.x
    import name`` is an edge to ``eval_harness/x/__init__.py`` unless ``name`` is a submodule).

Imports under ``if TYPE_CHECKING:`` are exempt: they never run, and annotations may name a
type of any layer. Dynamic imports (``importlib.import_module`` of a configured string) are
not edges: they are plug-in points (a runner, a judge, a ``python -m`` child).

Run by ``.ci/run`` through pytest like every other test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

PKG = ROOT / "eval_harness"

#: THE LAYER MAP, low -> high. Key: the first name under ``eval_harness`` (a package or a
#: root module); ``""`` is the package root ``eval_harness/__init__.py`` (it re-exports the
#: public API, so it is a door). A package may import its own layer or lower, never higher.
LAYERS: dict[str, int] = {
    # 0: private utilities, errors, the version
    "_util": 0, "errors": 0, "_version": 0,
    # 1: the config schema and loader (with the dialect seam), the starter project
    "config": 1, "starter": 1,
    # 2: the matrix of cells, prices, traces, the call cache
    "matrix": 2, "pricing": 2, "trace": 2, "cache": 2,
    # 3: run directories on disk
    "store": 3,
    # 4: judges (never import runner)
    "judges": 4,
    # 5: running cells; analysing run directories (siblings: neither imports the other)
    "runner": 5, "analysis": 5,
    # 6: rendering reports (renders only)
    "reports": 6,
    # 7: agent-eval-harness as a dialect (translators, run format, builtin judges, export)
    "aeh": 7,
    # 8: the application layer: run(RunOptions), analyze(AnalysisOptions)
    "app": 8,
    # 9: the doors
    "cli": 9, "api": 9, "serve": 9, "ci": 9, "": 9,
    # `python -m eval_harness`: the command itself (it may import cli/, nothing else)
    "__main__": 9,
}
#: same-layer packages that must not import each other
APART: frozenset[tuple[str, str]] = frozenset({("runner", "analysis"), ("analysis", "runner")})
#: the highest core layer (core never imports aeh)
CORE_TOP = 6


@dataclass(frozen=True)
class Import:
    src: str  # importing module, dotted
    dst: str  # imported module, dotted (the submodule if a name is one)
    line: int
    text: str  # the import statement as written

    def where(self) -> str:
        return f"{self.src} (line {self.line}: {self.text})"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node, skipping the bodies of ``if TYPE_CHECKING:`` (their ``else:`` runs)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _walk(other)
            continue
        yield child
        yield from _walk(child)


def _imports(mod: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: list[Import] = []
    for node in _walk(ast.parse(source, str(path))):
        text = lines[node.lineno - 1].strip() if isinstance(node, ast.stmt) else ""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "eval_harness" or alias.name.startswith("eval_harness."):
                    found.append(Import(mod, alias.name, node.lineno, text))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = mod.split(".")
                base = base[: len(base) - node.level + (1 if path.name == "__init__.py" else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "eval_harness" or target.startswith("eval_harness.")):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append(Import(mod, sub if sub in modules else target, node.lineno, text))
    return found


def _all_imports() -> list[Import]:
    modules = _modules()
    return sorted({imp for mod, path in modules.items() for imp in _imports(mod, path, modules)},
                  key=lambda imp: (imp.src, imp.line, imp.dst))


def _top(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer_violations(imports: list[Import]) -> list[str]:
    bad: list[str] = []
    for imp in imports:
        src, dst = _top(imp.src), _top(imp.dst)
        if src == dst:
            continue
        if src not in LAYERS or dst not in LAYERS:
            missing = src if src not in LAYERS else dst
            bad.append(f"{imp.where()}: eval_harness.{missing} is not in the layer map")
        elif LAYERS[dst] > LAYERS[src]:
            bad.append(f"{imp.where()}: {src or 'eval_harness'} (layer {LAYERS[src]}) "
                       f"imports {dst or 'eval_harness'} (layer {LAYERS[dst]})")
        elif (src, dst) in APART:
            bad.append(f"{imp.where()}: {src} and {dst} are siblings and must not import "
                       "each other")
    return bad


def _contract_violations(imports: list[Import]) -> list[str]:
    bad: list[str] = []
    for imp in imports:
        src, dst = _top(imp.src), _top(imp.dst)
        if dst == "aeh" and LAYERS.get(src, 99) <= CORE_TOP:
            bad.append(f"{imp.where()}: the core (layers 0-{CORE_TOP}) never imports "
                       "eval_harness.aeh")
        if dst == "cli" and src not in ("cli", "__main__"):
            bad.append(f"{imp.where()}: nothing outside eval_harness.cli imports it")
    return bad


def _cycles(imports: list[Import]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative) with more than one module, or a
    module importing itself."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.src, set()).add(imp.dst)
        graph.setdefault(imp.dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    sccs: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    scc: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        scc.append(member)
                        if member == node:
                            break
                    if len(scc) > 1 or node in graph[node]:
                        sccs.append(sorted(scc))
    return sorted(sccs)


def _describe_cycle(scc: list[str], imports: list[Import]) -> str:
    members = set(scc)
    edges = sorted({imp.where() + f" -> {imp.dst}" for imp in imports
                    if imp.src in members and imp.dst in members})
    return f"cycle among {', '.join(scc)}:\n      " + "\n      ".join(edges)


def test_the_layer_map_names_every_package_and_root_module() -> None:
    tops = {_top(mod) for mod in _modules()}
    assert sorted(tops - set(LAYERS)) == [], "add them to LAYERS in tests/test_layers.py"


def test_each_package_imports_only_its_own_or_lower_layers() -> None:
    bad = _layer_violations(_all_imports())
    assert not bad, f"{len(bad)} upward import(s):\n  " + "\n  ".join(bad)


def test_core_never_imports_aeh_and_only_cli_imports_cli() -> None:
    bad = _contract_violations(_all_imports())
    assert not bad, f"{len(bad)} forbidden import(s):\n  " + "\n  ".join(bad)


def test_no_import_cycles_function_level_imports_included() -> None:
    imports = _all_imports()
    cycles = _cycles(imports)
    assert not cycles, f"{len(cycles)} import cycle(s):\n  " + "\n  ".join(
        _describe_cycle(scc, imports) for scc in cycles)


def test_the_checker_sees_function_level_imports_and_cycles(tmp_path: Path) -> None:
    """The checker itself: a function-level import is an edge, TYPE_CHECKING is not."""
    src = tmp_path / "m.py"
    src.write_text("from typing import TYPE_CHECKING\n"
                   "if TYPE_CHECKING:\n    from eval_harness.cli import main\n"
                   "def f():\n    from eval_harness.runner import base\n", encoding="utf-8")
    modules = {"eval_harness.runner.base": src, "eval_harness.runner": src}
    got = _imports("eval_harness.judges.x", src, modules)
    assert [(i.dst, i.line) for i in got] == [("eval_harness.runner.base", 5)]
    assert _layer_violations(got)
    a = Import("eval_harness.a", "eval_harness.b", 1, "")
    b = Import("eval_harness.b", "eval_harness.a", 1, "")
    assert _cycles([a, b]) == [["eval_harness.a", "eval_harness.b"]]
