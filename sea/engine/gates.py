"""Tools whose result may need a person's answer before the pulse goes on.

A *gate* belongs to one tool (the runtime keeps them by tool name on the pulse,
:attr:`sea.engine.pulse.Pulse.gates`). After the tool ran,
:func:`sea.nodes._tools.run_tool` asks the gate what to ask a person about its result
(:meth:`ToolGate.request`); with a request, the pulse waits (a LangGraph interrupt carrying
the request and the tool's result) and, once resumed, the gate settles the result with the
answer (:meth:`ToolGate.settle`). Without one, the gate settles at once (``answer`` None:
e.g. a host policy approves). The settled value is what the node receives. A resumed pulse
does not call the tool again: the result travels in the request.

``plan_request_approval`` is such a tool (:mod:`sea.engine.plans.tools`).
"""

from __future__ import annotations

from typing import Any, Protocol


class ToolGate(Protocol):
    """What a gated tool's result asks of a person, and how the answer settles it."""

    def request(self, result: Any) -> dict[str, Any] | None:
        """What to ask about ``result`` (the tool's JSON result): a dict with at least
        ``action`` (a few words: what is to be approved), or None to settle without
        asking. Pure: it runs again when the pulse is resumed. A ``workspace`` (a resolved
        folder) says the answer may be taken only by a runtime in that workspace."""
        ...

    async def settle(
        self, result: Any, answer: Any, *, playbook: str | None, node: str | None
    ) -> Any:
        """The value the node receives: ``result`` settled with the person's ``answer``
        (None when nobody was asked). Raises :class:`sea.errors.SeaError` when the answer
        cannot be applied (the message says why)."""
        ...
