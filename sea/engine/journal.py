"""A called playbook's finished node runs, kept with its caller's step in a recoverable
pulse, so that the playbook runs in that step without a LangGraph run of its own
(:func:`sea.engine.calls.call_playbook`).

A recoverable pulse (a worker's) saves a checkpoint after every step, so that a node that
finished, and its model call, is not run again after a crash. A called playbook runs in
its caller's step when that keeps the same promise. When each of its runs is as one step
would be, that needs nothing (:meth:`sea.engine.compiler.Compiled.one_step`); otherwise its
nodes that may not run again harmlessly (a model call, a tool not marked replayable) are
kept here as they end: each one's update is written at once, before the next node starts,
as a pending write of the caller's step (LangGraph's own record of a task's writes, under
an id of its own and the channel :data:`CHANNEL`, which LangGraph leaves alone). Driven
again after a crash, the caller's step runs again from the checkpoint before it and calls
the playbook again: its pure nodes and its writes keyed by the node run run again (the same
update, nothing stored twice), and each kept node's update is taken from here instead of
running it, in the order they ran. A LangGraph run of the playbook's own would write a
checkpoint for each of its steps, and cost a millisecond or more to set up.

What goes on a kept node's update is what its checkpoint would keep: the state it leaves.
Its events are not sent again, as those of a step a checkpoint holds are not; what its model
calls spent is counted again against the pulse's budget, as the state says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.runtime import get_runtime

from sea.engine.state import Update
from sea.errors import ExecutionError
from sea.llm.budget import Meter

CHANNEL = "__sea_journal__"
"""The channel of a kept node run's write (LangGraph's own channels start with ``__``; a
saver that holds a step's writes until its checkpoint writes these at once,
:mod:`sea.host.durable_saver`)."""


@dataclass(frozen=True, slots=True)
class Journals:
    """Where a recoverable pulse keeps its called playbooks' node runs.

    Args:
        saver: The checkpointer the pulse's graphs write to.
        continued: The pulse ran before (it is driven again from its checkpoints): the
            runs its steps kept are read when they call a playbook again.
    """

    saver: BaseCheckpointSaver[Any]
    continued: bool

    async def open(self, call: str, nodes: frozenset[str], meter: Meter) -> Journal:
        """The journal of one call of a playbook, in the graph step that runs now.

        Args:
            call: Names the call within its step (the same when the step runs again).
            nodes: The callee's nodes whose runs are kept.
            meter: The pulse's budget count (a kept run's spending is counted again).

        Returns:
            The journal, holding what an earlier run of the step kept.
        """
        info = get_runtime().execution_info  # the enclosing graph task's
        if info is None:  # a recoverable pulse's nodes all run in a step of its graphs
            raise ExecutionError(f"{call}: a called playbook's runs cannot be kept outside "
                                 "a graph step")
        namespace = info.checkpoint_ns.rpartition("|")[0]  # its graph's; "" for the pulse's
        config: RunnableConfig = {"configurable": {
            "thread_id": info.thread_id, "checkpoint_ns": namespace,
            "checkpoint_id": info.checkpoint_id}}
        prefix = f"{CHANNEL}:{info.task_id}:{call}:"
        kept: dict[int, Mapping[str, Any]] = {}
        if self.continued:
            found = await self.saver.aget_tuple(config)
            for task_id, channel, value in (found.pending_writes or []) if found else []:
                if channel == CHANNEL and task_id.startswith(prefix):
                    kept[int(task_id[len(prefix):])] = value
        return Journal(self.saver, config, prefix, nodes, kept, meter)


class Journal:
    """One call's kept node runs (made by :meth:`Journals.open`)."""

    def __init__(self, saver: BaseCheckpointSaver[Any], config: RunnableConfig,
                 prefix: str, nodes: frozenset[str], kept: dict[int, Mapping[str, Any]],
                 meter: Meter) -> None:
        self._saver = saver
        self._meter = meter
        self._config = config
        self._prefix = prefix
        self.nodes = nodes
        """The callee's nodes whose runs are kept (the others run again)."""
        self._kept = kept
        self._count = 0

    async def run(self, node: str, runner: Callable[[], Awaitable[Update]]) -> Update:
        """The update of ``node``'s next run: kept by an earlier run of the step, or made
        by ``runner`` now and kept before it is returned.

        Raises:
            ExecutionError: the run kept in this place is of another node (the playbook
                did not take the path it took before: it was changed in between).
        """
        number = self._count
        self._count += 1
        kept = self._kept.get(number)
        if kept is not None:
            if kept.get("node") != node:
                raise ExecutionError(
                    f"the pulse cannot go on: its step kept a run of node "
                    f"{kept.get('node')!r} where {node!r} runs now (the playbook changed "
                    "since the pulse started)", node=node)
            update = dict(kept["update"])
            self._meter.credit(update.get("spent"))  # as if its node had run here
            return update
        update = await runner()
        await self._saver.aput_writes(self._config, [(CHANNEL, {"node": node, "update": update})],
                                      f"{self._prefix}{number}")
        return update
