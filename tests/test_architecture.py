"""The package layout is the architecture: layers import downwards only, and no import circles.

The layers are declared once, as import-linter contracts in ``pyproject.toml``; this test runs
them and looks for cycles between modules and between packages (type-checking imports
included: a reader follows those too), and keeps every module small enough to read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]

MAX_LINES = 500
"""The most lines a module of ``sea/`` or ``saimemory/`` may have."""

SHARED_ROOT_MODULES = {"__init__", "__main__", "errors", "diagnostics", "jsonfile", "jsontypes",
                       "resources"}
"""The root of ``sea/``: the package's face and the few modules every layer shares."""


def test_layers_and_the_store_boundary_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, "an import breaks a contract of pyproject.toml (run `lint-imports`)"


def _imports(graph: grimp.ImportGraph, module: str) -> Iterator[str]:
    return iter(sorted(graph.find_modules_directly_imported_by(module)))


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, _imports(graph, root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, _imports(graph, target)))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("sea", "saimemory", cache_dir=None)
    assert _cycles(graph) == []


def _package_of(module: str, is_package: Callable[[str], bool]) -> str:
    """The package a module belongs to: itself if it is a package, else its parent."""
    return module if is_package(module) else module.rpartition(".")[0]


def _package_graph(
    graph: grimp.ImportGraph, is_package: Callable[[str], bool]
) -> grimp.ImportGraph:
    """The imports between packages: one package imports another when one of its own modules
    (not its subpackages') imports one of the other's. The root packages are left out: the
    root of ``sea/`` is the package's face, which imports every layer, and the few modules
    every layer shares (``SHARED_ROOT_MODULES``); ``saimemory`` has no subpackage."""
    packages = grimp.ImportGraph()
    for module in graph.modules:
        package = _package_of(module, is_package)
        if "." not in package:
            continue
        packages.add_module(package)
        for imported in graph.find_modules_directly_imported_by(module):
            target = _package_of(imported, is_package)
            if "." in target and target != package:
                packages.add_module(target)
                packages.add_import(importer=package, imported=target)
    return packages


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").is_file()


def test_no_package_import_cycles() -> None:
    graph = grimp.build_graph("sea", "saimemory", cache_dir=None)
    assert _cycles(_package_graph(graph, _is_package)) == []


def test_package_cycle_finder_finds_a_package_cycle() -> None:
    """``pkg.a.x`` imports ``pkg.b.y`` and ``pkg.b.z`` imports ``pkg.a.w``: no modules form a
    cycle, the packages ``pkg.a`` and ``pkg.b`` do; ``pkg.c``, imported by both, is in none."""
    graph = grimp.ImportGraph()
    for name in ("pkg.a.x", "pkg.a.w", "pkg.b.y", "pkg.b.z", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a.x", imported="pkg.b.y")
    graph.add_import(importer="pkg.b.z", imported="pkg.a.w")
    graph.add_import(importer="pkg.a.w", imported="pkg.c")
    graph.add_import(importer="pkg.b.y", imported="pkg.c")
    assert _cycles(graph) == []
    packages = _package_graph(graph, lambda module: module in {"pkg.a", "pkg.b", "pkg.c"})
    assert _cycles(packages) == [["pkg.a", "pkg.b"]]


def _oversized() -> dict[str, int]:
    sizes = {}
    for path in sorted([*(ROOT / "sea").rglob("*.py"), *(ROOT / "saimemory").rglob("*.py")]):
        with path.open("rb") as file:
            lines = sum(1 for _ in file)
        if lines > MAX_LINES:
            sizes[path.relative_to(ROOT).as_posix()] = lines
    return sizes


def test_no_module_exceeds_the_line_limit() -> None:
    assert _oversized() == {}, (
        f"split these modules where their responsibilities divide (at most {MAX_LINES} lines)"
    )


def test_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    assert _cycles(graph) == [["pkg.a", "pkg.b"]]


def test_the_root_holds_only_the_face_and_shared_modules() -> None:
    root = {p.stem for p in (ROOT / "sea").glob("*.py")}
    assert root == SHARED_ROOT_MODULES
