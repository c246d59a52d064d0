"""What a runtime wires once for all its pulses, and the few parts each pulse makes anew.

The host's tools and the workspace's, the argument schemas of every tool, the names a
router may count on, the host's gates and the plan policy are the same for every pulse of a
runtime: :class:`Wiring` works them out when the runtime is made. A pulse adds only what
belongs to it: its model caller (its calls are reported as its events), the built-in
tools of its persona (made when first called) and, with a workspace, its persona's plan
tools and their approval gate.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sea.engine.compiler import Compiler
from sea.engine.events import Event, LLMCalled, WarningRaised
from sea.engine.plans.tools import PlanToolkit, plan_changed
from sea.engine.pulse import Pulse, RouterOffer, Services
from sea.engine.tools.box import ToolBox, signatures
from sea.engine.tools.builtin import builtin_tool_makers
from sea.engine.tools.model_signatures import MODEL_TOOL_ARGUMENTS
from sea.engine.tools.model_tools import model_tool_makers
from sea.engine.tools.signatures import ARGUMENTS, PLAN_ARGUMENTS
from sea.engine.tools.workspace import Workspace, workspace_tools
from sea.host.config import RuntimeConfig
from sea.host.runs import Run
from sea.llm.call import LLMCaller
from sea.llm.records import LLMCallRecord

Sink = Callable[[Event | None], None]
T = TypeVar("T")


class Wiring:
    """A runtime's pulses' common parts, worked out once from its configuration.

    Args:
        config: The runtime's configuration.
    """

    def __init__(self, config: RuntimeConfig) -> None:
        self.config = config
        self.services = Services(config.store, config.library, Compiler(config.registry),
                                 config.limits)
        """What every node reaches: store, library, compiler (its cache), limits."""
        root = config.workspace
        self.workspace = None if root is None else Workspace(Path(root))
        """The workspace the plan tools change, if the host gave one."""
        shared = () if root is None else tuple(workspace_tools(Path(root)))
        self._host = frozenset(tool.name for tool in config.tools)
        # a host tool takes the place of a built-in tool of its name
        self._tools = (*config.tools, *(t for t in shared if t.name not in self._host))
        self._signatures = signatures([*config.tools, *shared])
        """The argument schemas and validators of the runtime's tools, worked out once: the
        host's and the workspace's now, the built-in ones (made anew for each pulse's
        persona from the same argument models) by the first pulse that calls them."""
        names = {*self._host, *ARGUMENTS, *MODEL_TOOL_ARGUMENTS, *(t.name for t in shared)}
        if self.workspace is not None:
            names |= set(PLAN_ARGUMENTS)
        self._names = frozenset(names)
        """Every tool a pulse has: what a router may offer playbooks for."""

    def pulse(self, run: Run, sink: Sink) -> Pulse:
        """The pulse of ``run``: its caller, toolbox, router offer and gates.

        Args:
            run: The drive (its persona known).
            sink: Where the pulse's events go.

        Returns:
            The pulse, ready for its first frame.
        """
        assert run.persona is not None
        config, services = self.config, self.services
        caller = LLMCaller(
            config.models,
            services.store,
            max_retries=config.max_retries,
            history_budget=config.history_budget,
            on_record=lambda record: _report_call(run.pulse_id, record, sink),
            max_answer_chars=services.limits.max_answer_chars,
            options=config.llm,
            budget=services.limits.budget,
        )
        offer = RouterOffer(services.library, self._names)
        makers = builtin_tool_makers(store=services.store, persona_id=run.persona.id,
                                     library=offer, workspace=self.workspace)
        makers.update(model_tool_makers(store=services.store, persona=run.persona,
                                        caller=caller, intent=config.llm.intent))
        plans = self._plans(run, sink)
        gates = dict(config.gates)
        if plans is not None:
            makers.update(plans.tool_makers())
            gates = {**_unless(plans.gates(), self._host), **gates}
        toolbox = ToolBox(list(self._tools), known=self._signatures,
                          makers=_unless(makers, self._host))
        run.approval_tools = services.limits.approval_tools | run.approval_tools
        return Pulse(
            services, run.persona, run.pulse_id, sink, caller, toolbox, offer,
            run.approval_tools, recoverable=run.recover, stored_uids=run.stored_uids,
            gates=gates,
        )

    def _plans(self, run: Run, sink: Sink) -> PlanToolkit | None:
        """The plan tools of the pulse's persona, when the host gave a workspace; their
        events go to the pulse's events."""
        if self.workspace is None:
            return None
        assert run.persona is not None
        return PlanToolkit(
            self.services.store, run.persona.id, self.workspace, self.config.plan_policy,
            on_event=lambda event, playbook, node: sink(
                plan_changed(run.pulse_id, event, playbook, node)),
        )


def _unless(found: dict[str, T], host: frozenset[str]) -> dict[str, T]:
    """``found`` but the names a host tool has taken."""
    return {name: value for name, value in found.items() if name not in host}


def _report_call(pulse_id: str, record: LLMCallRecord, sink: Sink) -> None:
    sink(LLMCalled(pulse_id, record))
    for text in record.warnings:
        sink(WarningRaised(pulse_id, "llm_call", text, record.playbook, record.node))

