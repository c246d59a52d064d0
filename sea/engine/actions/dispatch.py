"""Running a plan's actions in order, with ``ref:`` arguments resolved and normalized.

For each action, in order:

1. every ``"ref:<action_id>"`` parameter receives that earlier action's raw result,
   normalized to the type the parameter expects (:mod:`sea.engine.tools.refs` holds the
   rules); each resolution is a :class:`~sea.engine.events.RefResolved` event;
2. the type guard checks the arguments right before the call;
3. the tool runs like any other tool call (its ``tool_call`` event carries the action id,
   with the arguments as the tool received them).

An action that cannot be prepared, or whose tool fails, is ``failed`` with an error naming
the action, the parameter, what was found and what was expected; the actions after it are
``skipped`` and say why. A failed action is an outcome, never the node's failure.
Cancellation and approval waits propagate untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Literal, Protocol

from sea.engine.actions.catalogue import ToolSpec
from sea.engine.actions.plan import PlannedAction
from sea.engine.events import ActionEnded, ActionStarted, RefResolved, WarningRaised
from sea.engine.pulse import Frame
from sea.engine.tools.refs import Normalization, RefProblem, ToolParameters, ref_target
from sea.errors import ActionSkipped, ExecutionError, ToolArgumentError

Status = Literal["ok", "failed", "skipped"]


class CallTool(Protocol):
    """Runs one tool call for a node (:func:`sea.nodes._tools.run_tool`)."""

    def __call__(
        self,
        frame: Frame,
        node: str,
        name: str,
        args: Mapping[str, Any],
        *,
        action_id: str | None = None,
        approved: bool = False,
        resumed: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Awaitable[Any]:
        """The tool's result (JSON data); failures raise ExecutionError subclasses."""
        ...


@dataclass(slots=True)
class Outcome:
    """What became of one action."""

    action_id: str
    tool: str
    status: Status
    result: Any = None
    error: dict[str, Any] | None = None
    normalized: list[Normalization] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{action_id, tool, status, result | error, normalized}`` (the ``output_key``)."""
        data: dict[str, Any] = {"action_id": self.action_id, "tool": self.tool,
                                "status": self.status}
        if self.status == "ok":
            data["result"] = self.result
        else:
            data["error"] = self.error
        data["normalized"] = [
            {"parameter": n.parameter, "rule": n.rule, "from_type": n.from_type,
             "to_type": n.to_type, **({"detail": n.detail} if n.detail else {})}
            for n in self.normalized
        ]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        """The outcome :meth:`to_json` gave (for a resumed pulse's earlier actions)."""
        normalized = [
            Normalization(str(n["parameter"]), str(n["rule"]), str(n["from_type"]),
                          str(n["to_type"]), n.get("detail"))
            for n in data.get("normalized") or []
        ]
        status: Status = data["status"]
        return cls(str(data["action_id"]), str(data["tool"]), status, data.get("result"),
                   data.get("error"), normalized)


@dataclass(frozen=True, slots=True)
class Dispatcher:
    """Runs the actions of one node run.

    Args:
        frame: The node's playbook frame.
        node: The node's id.
        catalogue: The offered tools (their argument schemas drive normalization).
        call: How a tool call is made.
        string_cap: The most characters a string parameter may receive through a ref.
        approved: A person approved the plan (tools are not asked about again).
        context: What a person's approval request made by one of the actions carries
            besides the action's own result (the plan), so that the resumed node needs
            neither the model nor the actions before it again.
        resumed: The request the pulse waited on at this node, when it is resumed: the
            actions it lists as done (``done``, in order, ok) are not run again (their
            outcomes are taken as they were), and the action that asked gets the answer.
    """

    frame: Frame
    node: str
    catalogue: Mapping[str, ToolSpec]
    call: CallTool
    string_cap: int | None = None
    approved: bool = False
    context: Mapping[str, Any] = field(default_factory=dict)
    resumed: Mapping[str, Any] | None = None

    async def run(self, actions: Sequence[PlannedAction]) -> list[Outcome]:
        """Run ``actions`` in order; every action has an outcome."""
        fittings = {name: spec.refs() for name, spec in self.catalogue.items()}
        results: dict[str, Any] = {}
        outcomes: list[Outcome] = []
        failed: Outcome | None = None
        done = list((self.resumed or {}).get("done") or [])
        for index, action in enumerate(actions):
            if failed is not None:
                outcomes.append(self._skip(action, failed))
                continue
            if index < len(done) and done[index].get("action_id") == action.action_id:
                outcome = Outcome.from_json(done[index])  # ran before the pulse waited
            else:
                outcome = await self._run_one(
                    action, fittings[action.tool], results, _Context(self.context, outcomes)
                )
            outcomes.append(outcome)
            if outcome.status == "ok":
                results[action.action_id] = outcome.result
            else:
                failed = outcome
        return outcomes

    async def _run_one(
        self,
        action: PlannedAction,
        fitting: ToolParameters,
        results: Mapping[str, Any],
        context: Mapping[str, Any],
    ) -> Outcome:
        frame = self.frame
        pulse_id, playbook = frame.pulse.pulse_id, frame.name
        frame.emit(ActionStarted(pulse_id, playbook, self.node, action.action_id, action.tool,
                                 dict(action.parameters)))
        started = perf_counter()
        outcome = Outcome(action.action_id, action.tool, "ok")
        try:
            found = await self._looked_up(action, fitting, results)
            args = self._prepare(action, fitting, found, outcome)
            asked = self.resumed if self.resumed is not None and self.resumed.get(
                "action_id") == action.action_id else None
            outcome.result = await self.call(
                frame, self.node, action.tool, args, action_id=action.action_id,
                approved=self.approved, resumed=asked, context=context,
            )
        except RefProblem as problem:
            outcome.status = "failed"
            outcome.error = {"code": problem.code, "message": _named(action, problem.message)}
        except ExecutionError as exc:
            outcome.status = "failed"
            outcome.error = {"code": exc.code, "message": _named(action, exc.detail)}
        frame.emit(ActionEnded(pulse_id, playbook, self.node, action.action_id, action.tool,
                               outcome.status, outcome.error, perf_counter() - started))
        return outcome

    async def _looked_up(
        self, action: PlannedAction, fitting: ToolParameters, results: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """``results`` with what the action's refs need looked up (``x-sea-ref-lookup``: a
        ``step_id`` ref to a result with only a ``plan_id`` asks the plan tool for the plan's
        ``first_step_id``), each look-up a tool call of the action.

        Raises:
            RefProblem: the look-up's result has none of the keys either (``no_id_key``).
        """
        needed = fitting.lookups(action.parameters, results)
        if not needed:
            return results
        merged = dict(results)
        for lookup in needed:
            found = await self.call(self.frame, self.node, lookup.tool,
                                    {lookup.key: lookup.value}, action_id=action.action_id,
                                    approved=self.approved)
            merged[lookup.ref] = lookup.merged(merged[lookup.ref], found)
            if not any(merged[lookup.ref].get(key) for key in lookup.keys):
                raise RefProblem(
                    lookup.parameter, "no_id_key",
                    f"the result of action {lookup.ref!r} has none of {', '.join(lookup.keys)}, "
                    f"and {lookup.tool} of its {lookup.key} {lookup.value!r} gives none either "
                    "(a plan whose action specs are not set yet has no step yet)",
                    ref=lookup.ref, tool=action.tool)
        return merged

    def _prepare(
        self,
        action: PlannedAction,
        fitting: ToolParameters,
        results: Mapping[str, Any],
        outcome: Outcome,
    ) -> dict[str, Any]:
        args, normalized, warnings = fitting.resolve(
            action.parameters, results, string_cap=self.string_cap
        )
        if normalized or warnings:
            frame = self.frame
            pulse_id, playbook = frame.pulse.pulse_id, frame.name
            outcome.normalized = normalized
            for record in normalized:
                ref = ref_target(action.parameters.get(record.parameter)) or ""
                frame.emit(RefResolved(pulse_id, playbook, self.node, action.action_id,
                                       record.parameter, ref, record.rule, record.from_type,
                                       record.to_type, record.detail))
            for text in warnings:
                frame.emit(WarningRaised(pulse_id, "ref_normalized", _named(action, text),
                                         playbook, self.node))
        problem = fitting.guard(args)
        if problem is not None:
            raise ToolArgumentError(problem, playbook=self.frame.name, node=self.node)
        return args

    def _skip(self, action: PlannedAction, failed: Outcome) -> Outcome:
        frame, pulse = self.frame, self.frame.pulse
        reason = ActionSkipped(f"not run: action {failed.action_id!r} before it failed")
        error = {"code": reason.code, "message": reason.detail}
        frame.emit(ActionEnded(pulse.pulse_id, frame.name, self.node, action.action_id,
                               action.tool, "skipped", error))
        return Outcome(action.action_id, action.tool, "skipped", error=error)


class _Context(Mapping[str, Any]):
    """What an approval request made by an action carries besides its result: the node's
    context and ``done``, the outcomes before the action (in JSON), written only when a
    request is made."""

    __slots__ = ("_base", "_before", "_count")

    def __init__(self, base: Mapping[str, Any], before: list[Outcome]) -> None:
        self._base = base
        self._before = before
        self._count = len(before)  # the list grows after this action: the ones before it

    def __getitem__(self, key: str) -> Any:
        if key == "done":
            return [outcome.to_json() for outcome in self._before[: self._count]]
        return self._base[key]

    def __iter__(self) -> Iterator[str]:
        yield from (key for key in self._base if key != "done")
        yield "done"

    def __len__(self) -> int:
        return len(self._base) + (0 if "done" in self._base else 1)


def _named(action: PlannedAction, message: str) -> str:
    return f"action {action.action_id!r}: {message}"
