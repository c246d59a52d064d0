"""``actions``: the model plans several tool calls in one answer; they run in order.

One call through the LLM call path asks for a plan whose schema is built from the offered
tools (:mod:`sea.engine.actions.plan`), with the instruction generated from the same
catalogue (:mod:`sea.engine.actions.prompt`); what the schema cannot say (a ``ref:`` to a
later action, a duplicate id) goes back to the model as a retry. The accepted plan is an
``actions_planned`` event; when one of its tools needs a person's approval the whole plan
is shown and approved once, before anything runs (a resumed pulse runs the plan it showed,
without asking the model again). An action whose tool's result waits for a person (a gated
tool, :mod:`sea.engine.gates`) makes the pulse wait with the plan and the outcomes so far;
resumed, the node runs neither the model nor those actions again.
:class:`~sea.engine.actions.dispatch.Dispatcher` runs the actions. ``output_key`` (and
``last``) receive the outcomes. The node fails (to ``error_next``) only when the model call
fails; a failed action is an outcome.
"""

from __future__ import annotations

from typing import Any

from sea.engine.actions.catalogue import ToolSpec, catalogue_of
from sea.engine.actions.dispatch import Dispatcher
from sea.engine.actions.plan import accepted_actions, plan_problem, plan_schema
from sea.engine.actions.prompt import actions_prompt
from sea.engine.approval import require_approval
from sea.engine.events import ActionsPlanned
from sea.engine.pulse import Frame, as_text
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.engine.waits import Waits
from sea.lang.node_models import ActionsNode
from sea.lang.templates import render
from sea.lang.trust import neutralize_outside
from sea.llm.call import LLMRequest
from sea.llm.context import wrap_system
from sea.nodes._tools import run_tool
from sea.nodes.llm import intent_steer, memorize_line, memorize_tags

PLAN_APPROVAL = "running the planned actions"
"""The ``action`` of the approval request a plan makes."""


class ActionsKind(NodeKind[ActionsNode]):
    """Runs ``actions`` nodes."""

    model = ActionsNode

    def waits(self, node: ActionsNode) -> Waits:
        """Asks when the policy asks about one of the offered tools or gates it."""
        return Waits(tools=frozenset(node.available_tools))

    async def run(self, node: ActionsNode, state: PlaybookState, frame: Frame) -> Update:
        """Plan with the model (or take the plan a person was shown), then run the plan."""
        pulse = frame.pulse
        catalogue = catalogue_of(
            pulse.toolbox, node.available_tools, playbook=frame.name, node=node.id
        )
        shown = pulse.take_pending(frame.name, node.id)
        if shown is not None and isinstance(shown.get("plan"), dict):
            plan: dict[str, Any] = shown["plan"]
            pulse.caller.meter.credit(shown.get("spent"))  # the plan's call, before the wait
        else:
            plan = await self._plan(node, state, frame, catalogue)
        actions, reason = accepted_actions(plan)
        specs = {spec.name: spec.to_json() for spec in catalogue}
        frame.emit(ActionsPlanned(pulse.pulse_id, frame.name, node.id,
                                  [a.to_json() for a in actions], reason, specs))
        asking = sorted({a.tool for a in actions if a.tool in pulse.approval_tools})
        if asking:
            require_approval(frame, node.id, PLAN_APPROVAL, {"tools": asking, "plan": plan})
        dispatcher = Dispatcher(
            frame, node.id, {spec.name: spec for spec in catalogue}, run_tool,
            string_cap=frame.services.limits.ref_text_cap, approved=bool(asking),
            context={"plan": plan}, resumed=shown,
        )
        outcomes = [outcome.to_json() for outcome in await dispatcher.run(actions)]
        values: dict[str, Any] = {"last": outcomes}
        if node.output_key:
            values[node.output_key] = outcomes
        return assign(values)

    async def _plan(
        self, node: ActionsNode, state: PlaybookState, frame: Frame, catalogue: list[ToolSpec]
    ) -> dict[str, Any]:
        pulse = frame.pulse
        task = as_text(render(node.action, variables(state), missing="keep",
                              guard=neutralize_outside))
        prompt = actions_prompt(task, catalogue, node.max_actions)
        pattern, stage = intent_steer(node.intent_patterns, state)
        request = LLMRequest(
            playbook=frame.name,
            node=node.id,
            persona=pulse.persona,
            profile=node.context_profile,
            model_type=node.model_type,
            prompt=prompt,
            response_schema=plan_schema(catalogue, node.max_actions),
            pulse_id=pulse.pulse_id,
            scope=frame.scope,
            thread=frame.thread,
            light=frame.sub_line,
            check=lambda value: plan_problem(value, catalogue, node.max_actions),
            specialized=node.specialized,
            intent_pattern=pattern,
            intent_stage=stage,
        )
        result = await pulse.caller.call(request)
        plan: dict[str, Any] = dict(result.parsed or {})
        tags = memorize_tags(node.memorize)
        if tags is not None:
            line = memorize_line(node.memorize)
            await frame.remember(node.id, "user", wrap_system(prompt), tags, line=line)
            await frame.remember(node.id, "assistant", as_text(plan), tags, line=line)
        return plan


KIND = ActionsKind()
