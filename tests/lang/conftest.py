"""Shared fixtures of the language tests: the test data directory, library and catalogue."""

from pathlib import Path

import pytest

from sea.lang.checks import CheckContext, ToolCatalogue
from sea.lang.library import PlaybookLibrary

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def context() -> CheckContext:
    library = PlaybookLibrary([DATA / "library"])
    return CheckContext(library=library, tools=ToolCatalogue.load(DATA / "tools.json"))
