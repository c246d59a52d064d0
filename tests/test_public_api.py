"""The extension API is SEA's top level: what a host needs to run pulses, add a node type,
a tool or a store backend is importable from ``sea``, documented (``Args``/``Returns``/
``Raises``), cheap to import, and the documentation's extension examples import nothing
else of SEA."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sea

ROOT = Path(__file__).resolve().parents[1]
EXTENSION_PAGES = ("guides/embedding.md", "guides/node-types.md", "guides/host-tools.md")
PUBLIC_PACKAGES = {"sea", "saimemory"}


def _examples() -> list[tuple[str, str]]:
    """Each Python block of the extension pages and the README: (page, code)."""
    found = []
    pages = [ROOT / "docs" / name for name in EXTENSION_PAGES] + [ROOT / "README.md"]
    for page in pages:
        for code in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            found.append((page.relative_to(ROOT).as_posix(), code))
    return found


def _imported(code: str) -> list[str]:
    """Every module a piece of code imports."""
    modules = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            modules.append(node.module)
    return modules


def test_each_extension_page_shows_an_example() -> None:
    pages = {page for page, _ in _examples()}
    assert {f"docs/{name}" for name in EXTENSION_PAGES} <= pages


@pytest.mark.parametrize(("page", "code"), _examples())
def test_the_examples_import_nothing_internal(page: str, code: str) -> None:
    internal = [m for m in _imported(code)
                if m.split(".")[0] in PUBLIC_PACKAGES and m not in PUBLIC_PACKAGES]
    assert internal == [], f"{page} imports {internal}: import them from sea (or saimemory)"


def test_the_examples_names_are_exported() -> None:
    for page, code in _examples():
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and node.module == "sea":
                missing = [a.name for a in node.names if a.name not in sea.__all__]
                assert missing == [], f"{page}: {missing} not in sea.__all__"


@pytest.mark.parametrize("name", sea.__all__)
def test_every_exported_name_resolves_and_is_documented(name: str) -> None:
    value = getattr(sea, name)
    assert value is not None
    if inspect.isfunction(value) or inspect.isclass(value):
        assert inspect.getdoc(value), f"sea.{name} has no docstring"


@pytest.mark.parametrize("name", [n for n in sea.__all__ if inspect.isfunction(getattr(sea, n))])
def test_every_exported_function_says_its_arguments_and_result(name: str) -> None:
    function = getattr(sea, name)
    doc = inspect.getdoc(function) or ""
    signature = inspect.signature(function)
    if signature.parameters:
        assert "Args:" in doc, f"sea.{name}: no Args section"
    if signature.return_annotation not in ("None", None, inspect.Signature.empty):
        assert "Returns:" in doc or "Yields:" in doc, f"sea.{name}: no Returns section"


@pytest.mark.parametrize("name", ["Runtime", "RuntimeConfig", "Registry", "ModelSet"])
def test_the_classes_a_host_builds_say_their_arguments(name: str) -> None:
    doc = inspect.getdoc(getattr(sea, name)) or ""
    assert "Args:" in doc or "Attributes:" in doc, f"sea.{name}: no Args section"


def test_importing_sea_loads_neither_the_engine_nor_a_model_library() -> None:
    probe = ("import sys, sea; print(sorted(m for m in sys.modules if m.startswith("
             "('sea.host', 'sea.engine', 'sea.lang', 'langchain_core', 'langgraph'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        sea.Nothing  # noqa: B018
