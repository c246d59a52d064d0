"""The runtime of a command that runs pulses (``sea run``, ``sea resume``, ``sea worker``),
built one way from its options.

By the time a command runs, each option holds its flag, else its ``SEA_*`` variable, else
the project file's value, else its default (:mod:`sea.cli._project.resolve`).
:func:`runtime_args` turns those options into what a runtime is, checking every one of them
before anything is opened (the playbooks, the models and their prices, the limits, the
workspace, the busy policy); :meth:`RuntimeArgs.config` then adds what the command opened
(the store, the host's tools) and returns the :class:`~sea.host.config.RuntimeConfig` a
:class:`~sea.host.runtime.Runtime` runs with.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from saimemory import MessageStore
from saimemory.base import DEFAULT_BUDGET
from sea.cli._budget import budget_of, check_cost_budget, llm_options_of
from sea.cli._filelimits import file_limit
from sea.cli._limits import limits_of
from sea.cli._setup import checkpoint_location, store_location
from sea.cli._text import printable
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.turns import WhenBusy, WhenPreempted
from sea.jsonfile import CONFIG_FILES, TRACE_FILES
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions
from sea.llm.structured import MethodMemory
from sea.telemetry import Telemetry, from_environment


@dataclass(frozen=True, slots=True)
class RuntimeArgs:
    """What a command's options say its runtime is, checked before anything is opened.

    Attributes:
        location: The store: a SQLite file or a ``postgresql://`` DSN.
        library: The playbooks (``--playbooks`` directories, then the bundled ones).
        models: The normal and lightweight models.
        limits: Bounds, budget and approval policy (``--limit``, ``--ask-before``...).
        llm: How model calls are made (prices, safety rules...).
        workspace: The ``--workspace`` directory, if any.
        when_busy: ``--when-busy``.
        busy_timeout: ``--busy-timeout``.
        when_preempted: ``--when-preempted`` (``sea worker``, ``sea serve``).
        telemetry: ``--otel``: OpenTelemetry as the ``OTEL_*`` variables say (None without).
    """

    location: str
    library: PlaybookLibrary
    models: ModelSet
    limits: Limits
    llm: LLMOptions
    workspace: Path | None
    when_busy: WhenBusy
    busy_timeout: float
    telemetry: Telemetry | None = None
    when_preempted: WhenPreempted = "resume"

    def flush_telemetry(self) -> None:
        """Export what ``--otel`` still holds (the command is about to end)."""
        if self.telemetry is not None:
            self.telemetry.shutdown()

    def config(
        self, store: MessageStore, *, tools: Sequence[BaseTool] = (),
        keep_checkpoints: bool = False,
    ) -> RuntimeConfig:
        """The runtime's configuration, with what the command opened.

        Args:
            store: The store at :attr:`location`, opened.
            tools: The host's tools (``--tools``, ``--mcp``).
            keep_checkpoints: Keep the checkpoints of ended pulses (a worker's, until it
                has recorded how a pulse ended).

        Returns:
            The configuration: checkpoints beside (or in) the store.
        """
        return RuntimeConfig(
            store, self.models, tools=tools, library=self.library,
            checkpoint_path=checkpoint_location(self.location),
            history_budget=DEFAULT_BUDGET, limits=self.limits, llm=self.llm,
            workspace=self.workspace, when_busy=self.when_busy,
            busy_timeout=self.busy_timeout, when_preempted=self.when_preempted,
            keep_checkpoints=keep_checkpoints,
            telemetry=self.telemetry,
        )


def runtime_args(
    args: argparse.Namespace, library: PlaybookLibrary | None = None
) -> RuntimeArgs:
    """What the parsed (and resolved) options say the runtime is.

    Args:
        args: The command's options (:func:`add_model_arguments` and ``--when-busy``,
            ``--busy-timeout``).
        library: The playbooks, when the command found them itself (``sea run FILE``);
            default: the ``--playbooks`` directories, then the bundled ones.

    Returns:
        Everything but the store and the host's tools.

    Raises:
        UsageError: a ``--playbooks`` entry or ``--workspace`` is not a directory, a model
            cannot be made, a ``--max-cost`` cannot be reached, a limit is out of range,
            the store's directory does not exist, or ``--otel`` lacks the ``otel`` extra
            or meets an ``OTEL_*`` value SEA cannot use.
    """
    library = library or PlaybookLibrary.bundled(search_dirs(args.playbooks))
    models = models_of(args)
    location = store_location(args.db)
    limits = limits_of(args, approval_tools=frozenset(args.ask_before),
                       budget=budget_of(args), tool_timeout_s=args.tool_timeout)
    telemetry = from_environment(os.environ) if getattr(args, "otel", False) else None
    return RuntimeArgs(location, library, models, limits, llm_options_of(args),
                       workspace_dir(args.workspace), args.when_busy, args.busy_timeout,
                       telemetry, getattr(args, "when_preempted", "resume"))


def search_dirs(dirs: Sequence[str]) -> list[Path]:
    """The ``--playbooks`` directories.

    Raises:
        UsageError: an entry is not a directory.
    """
    search = [Path(d) for d in dirs]
    for directory in search:
        if not directory.is_dir():
            raise UsageError(f"--playbooks {directory}: not a directory")
    return search


def workspace_dir(given: str | None) -> Path | None:
    """The ``--workspace`` directory.

    Raises:
        UsageError: it is not a directory.
    """
    if given is None:
        return None
    path = Path(given).expanduser()
    if not path.is_dir():
        raise UsageError(f"--workspace {given}: not a directory")
    return path


def model_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → (key, value); VALUE is JSON when it parses (numbers, booleans...)."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key.strip(), orjson.loads(value)
    except orjson.JSONDecodeError:
        return key.strip(), value


def models_of(args: argparse.Namespace) -> ModelSet:
    """The models the options name; a ``--max-cost`` their prices cannot reach is refused
    here, before anything runs (:func:`~sea.cli._budget.check_cost_budget`)."""
    models = chat_models(
        args.model,
        args.light_model,
        args.model_option,
        args.light_model_option,
        args.structured_method,
    )
    check_cost_budget(args, models, _warn)
    return models


def chat_models(
    model: str,
    light: str | None,
    options: Sequence[tuple[str, Any]] = (),
    light_options: Sequence[tuple[str, Any]] = (),
    structured_method: str = "auto",
) -> ModelSet:
    """The normal and lightweight models; one object when both specs (and options) agree."""
    from sea.chat.providers import resolve_model

    factories = _model_factories()
    forced = None if structured_method == "auto" else structured_method
    memory = MethodMemory(forced)  # type: ignore[arg-type]  # argparse checked the choice
    normal = resolve_model(model, options=dict(options), factories=factories)
    if light is None and not light_options or light == model and light_options == options:
        return ModelSet(normal=normal, lightweight=normal, structured=memory)
    lightweight = resolve_model(
        light or model, options=dict(light_options or options), factories=factories
    )
    return ModelSet(normal=normal, lightweight=lightweight, structured=memory)


def _model_factories() -> dict[str, Callable[[str], BaseChatModel]]:
    """``replay:TRACE`` (:mod:`sea.trace.replay`) and ``scripted:FILE``, their files read
    up to the limits the environment sets (``SEA_MAX_TRACE_BYTES``,
    ``SEA_MAX_CONFIG_BYTES``)."""
    from sea.chat.scripted import ScriptedChatModel
    from sea.trace.replay import replay_model

    traces, scripts = file_limit(TRACE_FILES), file_limit(CONFIG_FILES)
    return {
        "replay": lambda text: replay_model(text, limit=traces),
        "scripted": lambda text: ScriptedChatModel.from_file(Path(text).expanduser(),
                                                             limit=scripts),
    }


def _warn(text: str) -> None:
    print(printable(f"sea: warning: {text}"), file=sys.stderr)
