"""SEA: a declarative playbook runtime for AI personas.

The error tree is imported eagerly; the language front end (``PlaybookLibrary``,
``check_document``, ``load_playbook_file``, ``CheckContext``, ``ToolCatalogue``) and the
host API (``Runtime``, ``ModelSet``, ``Limits``, ``Budget``, ``LLMOptions``, ``PulseResult``)
are imported on first use, so ``import sea`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from sea.errors import (
    Diagnostic,
    ExecutionError,
    PlaybookError,
    PulseCancelled,
    SeaError,
    Severity,
    UsageError,
)

__version__ = "0.1.0"
"""SEA's version: ``sea --version`` prints it and the build reads it here
(``[tool.hatch.version]`` in ``pyproject.toml``), so the two never disagree."""

if TYPE_CHECKING:
    from sea.engine.limits import Limits
    from sea.host.result import PulseResult
    from sea.host.runtime import Runtime
    from sea.lang.checks import CheckContext, ToolCatalogue
    from sea.lang.library import PlaybookLibrary
    from sea.lang.loader import LoadResult, check_document, load_playbook_file
    from sea.llm.budget import Budget
    from sea.llm.models import ModelSet
    from sea.llm.options import LLMOptions

_LAZY = {
    "CheckContext": "sea.lang.checks",
    "ToolCatalogue": "sea.lang.checks",
    "PlaybookLibrary": "sea.lang.library",
    "LoadResult": "sea.lang.loader",
    "check_document": "sea.lang.loader",
    "load_playbook_file": "sea.lang.loader",
    "Limits": "sea.engine.limits",
    "ModelSet": "sea.llm.models",
    "Budget": "sea.llm.budget",
    "LLMOptions": "sea.llm.options",
    "PulseResult": "sea.host.result",
    "Runtime": "sea.host.runtime",
}

__all__ = [
    "Budget",
    "CheckContext",
    "Diagnostic",
    "ExecutionError",
    "LLMOptions",
    "Limits",
    "LoadResult",
    "ModelSet",
    "PlaybookError",
    "PlaybookLibrary",
    "PulseCancelled",
    "PulseResult",
    "Runtime",
    "SeaError",
    "Severity",
    "ToolCatalogue",
    "UsageError",
    "check_document",
    "load_playbook_file",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sea' has no attribute {name!r}")
    return getattr(import_module(module), name)
