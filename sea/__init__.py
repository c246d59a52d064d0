"""SEA: a declarative playbook runtime for AI personas.

This module is SEA's public API: a host imports everything it needs from ``sea`` (and the
store's from ``saimemory``), never from a submodule.

- **Running pulses**: :class:`RuntimeConfig` (what a runtime is: store, models, tools,
  playbooks, checkpoints, workspace, limits, policies) and :class:`Runtime` (runs, streams,
  resumes and cancels pulses), with :class:`ModelSet`, :func:`resolve_model`,
  :class:`Limits`, :class:`Budget`, :class:`LLMOptions` (with :class:`TokenBudgets` and
  :class:`ResponseCache`), :class:`PlanPolicy`,
  :class:`PulseResult` and :class:`Event`; :class:`Telemetry` traces and measures pulses
  with OpenTelemetry.
- **A node type of the host's own**: :class:`NodeModel` / :class:`FallibleNode` (its
  document model), :class:`NodeKind` (its runner, :class:`Frame`, :data:`PlaybookState`,
  :data:`Update`, :func:`assign`, :func:`variables`, :func:`render`), the language's
  helpers :func:`template_reads` and :func:`keys_defined`, and :class:`Registry` /
  :func:`builtin_registry`.
- **Tools**: any langchain-core tool is a host tool (``RuntimeConfig(tools=[...])``);
  :class:`ToolGate` makes a tool's result wait for a person; :func:`module_tools`,
  :func:`mcp_tools`, :func:`blocking_mcp_tools` and :func:`read_mcp_config` load tools the
  way ``sea run --tools`` and ``--mcp`` do.
- **A store backend**: :class:`MessageStore`, the contract every SAIMemory backend keeps.
- **The language**: :class:`PlaybookLibrary`, :func:`check_document`,
  :func:`load_playbook_file`, :class:`CheckContext`, :class:`ToolCatalogue`.
- **Errors**: :class:`SeaError` and its tree, :class:`Diagnostic`.

The error tree is imported eagerly; everything else on first use, so ``import sea`` (and
``sea --help``) stays cheap.
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
    from saimemory.base import MessageStore
    from sea.chat.providers import resolve_model
    from sea.engine.events import Event
    from sea.engine.gates import ToolGate
    from sea.engine.limits import Limits
    from sea.engine.plans.policy import PlanPolicy
    from sea.engine.pulse import Frame
    from sea.engine.registry import NodeKind, Registry
    from sea.engine.state import PlaybookState, Update, assign, variables
    from sea.engine.waits import ALWAYS, NEVER, Waits
    from sea.host.config import RuntimeConfig
    from sea.host.mcp_config import read_mcp_config
    from sea.host.mcp_tools import blocking_mcp_tools, mcp_tools
    from sea.host.result import PulseResult
    from sea.host.runtime import Runtime
    from sea.host.tool_modules import module_tools
    from sea.lang.checks import CheckContext, ToolCatalogue
    from sea.lang.library import PlaybookLibrary
    from sea.lang.loader import LoadResult, check_document, load_playbook_file
    from sea.lang.node import FallibleNode, NodeModel, keys_defined, template_reads
    from sea.lang.templates import render
    from sea.lang.uses import Answer, CalleeUse, ChosenCallee, ExpressionUse, TagUse, ToolUse
    from sea.llm.budget import Budget
    from sea.llm.cache import ResponseCache
    from sea.llm.models import ModelSet
    from sea.llm.options import LLMOptions
    from sea.llm.tokens import TokenBudgets
    from sea.nodes import builtin_registry
    from sea.telemetry.options import Telemetry

_LAZY = {
    # running pulses
    "Runtime": "sea.host.runtime",
    "RuntimeConfig": "sea.host.config",
    "PulseResult": "sea.host.result",
    "ModelSet": "sea.llm.models",
    "resolve_model": "sea.chat.providers",
    "Limits": "sea.engine.limits",
    "Budget": "sea.llm.budget",
    "LLMOptions": "sea.llm.options",
    "TokenBudgets": "sea.llm.tokens",
    "ResponseCache": "sea.llm.cache",
    "PlanPolicy": "sea.engine.plans.policy",
    "Event": "sea.engine.events",
    "Telemetry": "sea.telemetry.options",
    # a node type of the host's own
    "NodeModel": "sea.lang.node",
    "FallibleNode": "sea.lang.node",
    "template_reads": "sea.lang.node",
    "keys_defined": "sea.lang.node",
    "NodeKind": "sea.engine.registry",
    "Registry": "sea.engine.registry",
    "builtin_registry": "sea.nodes",
    "Frame": "sea.engine.pulse",
    "PlaybookState": "sea.engine.state",
    "Update": "sea.engine.state",
    "assign": "sea.engine.state",
    "variables": "sea.engine.state",
    "render": "sea.lang.templates",
    "Waits": "sea.engine.waits",
    "ALWAYS": "sea.engine.waits",
    "NEVER": "sea.engine.waits",
    "Answer": "sea.lang.uses",
    "ToolUse": "sea.lang.uses",
    "CalleeUse": "sea.lang.uses",
    "ChosenCallee": "sea.lang.uses",
    "TagUse": "sea.lang.uses",
    "ExpressionUse": "sea.lang.uses",
    # tools
    "ToolGate": "sea.engine.gates",
    "module_tools": "sea.host.tool_modules",
    "mcp_tools": "sea.host.mcp_tools",
    "blocking_mcp_tools": "sea.host.mcp_tools",
    "read_mcp_config": "sea.host.mcp_config",
    # a store backend
    "MessageStore": "saimemory.base",
    # the language
    "CheckContext": "sea.lang.checks",
    "ToolCatalogue": "sea.lang.checks",
    "PlaybookLibrary": "sea.lang.library",
    "LoadResult": "sea.lang.loader",
    "check_document": "sea.lang.loader",
    "load_playbook_file": "sea.lang.loader",
}

__all__ = [
    "ALWAYS",
    "Answer",
    "Budget",
    "CalleeUse",
    "CheckContext",
    "ChosenCallee",
    "Diagnostic",
    "Event",
    "ExecutionError",
    "ExpressionUse",
    "FallibleNode",
    "Frame",
    "LLMOptions",
    "Limits",
    "LoadResult",
    "MessageStore",
    "ModelSet",
    "NEVER",
    "NodeKind",
    "NodeModel",
    "PlanPolicy",
    "PlaybookError",
    "PlaybookLibrary",
    "PlaybookState",
    "PulseCancelled",
    "PulseResult",
    "Registry",
    "ResponseCache",
    "Runtime",
    "RuntimeConfig",
    "SeaError",
    "Severity",
    "TagUse",
    "Telemetry",
    "TokenBudgets",
    "ToolCatalogue",
    "ToolGate",
    "ToolUse",
    "Update",
    "UsageError",
    "Waits",
    "assign",
    "blocking_mcp_tools",
    "builtin_registry",
    "check_document",
    "keys_defined",
    "load_playbook_file",
    "mcp_tools",
    "module_tools",
    "read_mcp_config",
    "render",
    "resolve_model",
    "template_reads",
    "variables",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sea' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # found once: the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
