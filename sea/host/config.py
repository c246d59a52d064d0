"""The configuration of a runtime: one frozen, validated value, apart from what runs it.

A :class:`RuntimeConfig` says everything a :class:`~sea.host.runtime.Runtime` is: its store
and models, its tools, where its playbooks and checkpoints are, its workspace, limits and
policies. It is built the same way by every host: from Python (``RuntimeConfig(store,
models, library=[...])``), by the command line from the project file and its flags
(:func:`sea.cli._runtime.runtime_args`), by the workers and by a trace replay. Its
loose inputs (a directory for a library, a text for a path) are normalized and checked
when it is made, so a mistake is a :class:`~sea.errors.UsageError` before anything runs,
and a runtime reads only settled values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from langchain_core.tools import BaseTool

from saimemory.base import DEFAULT_BUDGET, MessageStore
from saimemory.records import HistoryBudget
from sea.engine.gates import ToolGate
from sea.engine.limits import Limits
from sea.engine.plans.policy import PlanPolicy
from sea.engine.pulse import Library
from sea.engine.registry import Registry
from sea.engine.tools.workspace import Workspace
from sea.errors import UsageError
from sea.host.turns import BusyPolicy, WhenBusy, WhenPreempted
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.nodes import builtin_registry
from sea.telemetry.options import Telemetry

__all__ = ["RuntimeConfig"]

LibraryGiven = Library | str | Path | Sequence[str | Path]
"""A library, or the playbook directories (searched in order, then the bundled ones)."""


@dataclass(frozen=True, slots=True, init=False)
class RuntimeConfig:
    """Everything a runtime is, settled and checked once.

    Args:
        store: The persona message store (SAIMemory).
        models: The normal and lightweight chat models.
        library: Where playbooks are found by name: a library, or the playbook
            directories (searched in order, then the bundled playbooks).
        tools: The host's tools (the built-in ones are added unless a host tool has the name).
        checkpoint_path: Where the checkpoints live, a SQLite file or a ``postgresql://``
            DSN (``?schema=NAME`` allowed; needs the postgres extra). Waiting pulses can be
            resumed from it by another process; pulses running together share one
            connection to it. Default (``None``): a temporary SQLite file that lives as long
            as the runtime (unless the runtime is given a checkpointer of the host's).
        limits: Bounds and approval policy.
        registry: Node types (default: the built-in ones, :func:`sea.nodes.builtin_registry`).
            Playbooks found in directories may use every type it holds; a ``Library`` given
            as an object should be built with ``types=registry.node_types()``.
        max_retries: Retries of a rejected structured answer.
        history_budget: How much earlier conversation an LLM context may hold.
        keep_checkpoints: Keep the checkpoints of pulses that ended (ok, error, cancelled).
            By default only waiting pulses keep theirs, so the file does not grow forever.
        workspace: A directory the built-in workspace tools (``list_files``,
            ``file_exists``, ``read_file``, ``search_files``) may read, and nothing outside
            it, and the plan tools may change once a person approves; without one they are
            absent.
        when_busy: What a pulse does while another pulse of its persona runs (in this
            runtime, or in any process on the same store): ``"wait"`` for its turn (the
            default) or ``"fail"`` at once with :class:`sea.errors.PersonaBusy`.
        busy_timeout: The longest wait for a turn, in seconds; then ``PersonaBusy``.
        when_preempted: What a pulse does after it yielded its turn to a pulse of its
            persona of higher priority (a user's over an autonomous one's): ``"resume"``
            where it stopped once its turn comes back (the default) or ``"drop"`` (it
            ends, cancelled; what it stored stays). See :mod:`sea.host.turns`.
        plan_policy: What plans may do in the workspace (``run`` allow-list, size limits,
            automatic approval up to a risk): with a workspace, pulses also have the plan
            tools (:mod:`sea.engine.plans.tools`).
        llm: How model calls are made beyond which models: prices, rate-limit backoff,
            safety rules, short-term memory, guidelines, the intent threshold
            (:class:`sea.llm.options.LLMOptions`). Every pulse's calls are stored in
            SAIMemory (``sea stats`` reads them).
        gates: Tool name → gate (:mod:`sea.engine.gates`) for the host's own tools whose
            results wait for a person (a replay's, :mod:`sea.trace.replay`).
        telemetry: Trace and measure every pulse with OpenTelemetry
            (:class:`sea.telemetry.Telemetry`: the global providers or the host's own);
            without it (the default) nothing of OpenTelemetry is imported or run.

    Raises:
        UsageError: a playbook directory or the workspace is not a directory,
            ``max_retries`` is negative, ``telemetry`` is not a ``Telemetry``, or the busy
            policy is not one
            (``when_busy`` neither ``"wait"`` nor ``"fail"``, a negative ``busy_timeout``).
    """

    store: MessageStore
    models: ModelSet
    library: Library
    tools: tuple[BaseTool, ...]
    checkpoint_path: str | Path | None
    limits: Limits
    registry: Registry
    max_retries: int
    history_budget: HistoryBudget
    keep_checkpoints: bool
    workspace: Path | None
    busy: BusyPolicy
    plan_policy: PlanPolicy
    llm: LLMOptions
    gates: Mapping[str, ToolGate]
    telemetry: Telemetry | None

    def __init__(
        self,
        store: MessageStore,
        models: ModelSet,
        *,
        library: LibraryGiven,
        tools: Sequence[BaseTool] = (),
        checkpoint_path: str | Path | None = None,
        limits: Limits | None = None,
        registry: Registry | None = None,
        max_retries: int = 2,
        history_budget: HistoryBudget = DEFAULT_BUDGET,
        keep_checkpoints: bool = False,
        workspace: str | Path | None = None,
        when_busy: WhenBusy = "wait",
        busy_timeout: float = 300.0,
        when_preempted: WhenPreempted = "resume",
        plan_policy: PlanPolicy | None = None,
        llm: LLMOptions | None = None,
        gates: Mapping[str, ToolGate] | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        registry = registry or builtin_registry()
        settled: dict[str, Any] = {
            "store": store,
            "models": models,
            "library": _library(library, registry),
            "tools": tuple(tools),
            "checkpoint_path": checkpoint_path,
            "limits": limits or Limits(),
            "registry": registry,
            "max_retries": _retries(max_retries),
            "history_budget": history_budget,
            "keep_checkpoints": bool(keep_checkpoints),
            "workspace": _workspace(workspace),
            "busy": BusyPolicy(when_busy, busy_timeout, when_preempted),
            "plan_policy": plan_policy or PlanPolicy(),
            "llm": llm or LLMOptions(),
            "gates": MappingProxyType(dict(gates or {})),
            "telemetry": _telemetry(telemetry),
        }
        for name, value in settled.items():
            object.__setattr__(self, name, value)

    @property
    def when_busy(self) -> WhenBusy:
        """``"wait"`` for the persona's turn or ``"fail"`` at once (:attr:`busy`)."""
        return self.busy.when

    @property
    def busy_timeout(self) -> float:
        """The longest wait for the persona's turn, in seconds (:attr:`busy`)."""
        return self.busy.timeout

    def with_options(self, **changes: Any) -> RuntimeConfig:
        """A copy with some options changed, checked again.

        Args:
            changes: Options of the constructor, by name (``keep_checkpoints=True``...).

        Returns:
            The new configuration; this one is unchanged.

        Raises:
            UsageError: a changed option is not valid (as the constructor's).
        """
        given: dict[str, Any] = {name: getattr(self, name) for name in _OPTIONS}
        given.update(when_busy=self.busy.when, busy_timeout=self.busy.timeout)
        given.update(changes)
        store, models = given.pop("store"), given.pop("models")
        return RuntimeConfig(store, models, **given)


_OPTIONS = ("store", "models", "library", "tools", "checkpoint_path", "limits", "registry",
            "max_retries", "history_budget", "keep_checkpoints", "workspace", "plan_policy",
            "llm", "gates", "telemetry")

def _library(given: LibraryGiven, registry: Registry) -> Library:
    """The library a runtime reads: the one given, or one of the given directories.

    Raises:
        UsageError: a directory does not exist.
    """
    if isinstance(given, str | Path):
        given = [given]
    if not isinstance(given, Sequence):
        return given
    dirs = [Path(d) for d in given]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise UsageError(f"playbook directory not found: {', '.join(missing)}")
    return PlaybookLibrary.bundled(dirs, types=registry.node_types())


def _telemetry(given: Telemetry | None) -> Telemetry | None:
    if given is not None and not isinstance(given, Telemetry):
        raise UsageError(f"telemetry must be a sea.telemetry.Telemetry, not "
                         f"{type(given).__name__}")
    return given


def _retries(given: int) -> int:
    if isinstance(given, bool) or not isinstance(given, int) or given < 0:
        raise UsageError(f"max_retries must be a whole number >= 0, not {given!r}")
    return given


def _workspace(given: str | Path | None) -> Path | None:
    """The workspace directory, or None.

    Raises:
        UsageError: it is not a directory.
    """
    if given is None:
        return None
    Workspace(Path(given))  # checks it
    return Path(given)
