"""A recoverable pulse's view of the runtime's saver that writes only what going on after a
crash needs (:class:`DurablePulse`).

A recoverable pulse (a worker's) saves a checkpoint after every step (LangGraph's ``sync``
durability), and LangGraph, before each such checkpoint, saves the step's task writes on
their own: two commits a step, and one more for each graph's input checkpoint (the
pulse's and each called playbook's). Two of those write nothing a crash needs:

* **A step's task writes, when the checkpoint after the step follows.** They let a
  process that dies between a task's end and the checkpoint after its step go on without
  running the task again. In the engine's graphs a step has one task (a playbook's nodes
  run one after another) and the checkpoint follows its end at once, with no await of
  anything but this saver between: that checkpoint, written in place of the writes, is
  committed when they would have been, and it holds them (applied to the state). So
  they are held, and dropped when the checkpoint after their step is written. Writes that
  no checkpoint follows (an error, an interrupt for an approval, a resume answer, a
  called playbook's kept node run, :mod:`sea.engine.journal`: any channel named
  ``__...``) are written at once, after whatever is held of their namespace.
* **A graph's input checkpoint, and the checkpoint after its first step.** The first holds
  only the input of a graph that has run no step yet; the second, that input mapped onto
  the graph's channels (the first step of a graph started with an input runs only
  LangGraph's ``__start__`` task, which does that and nothing else). A process that dies
  before the checkpoint after the graph's second step starts the graph again from its
  input either way (the pulse's own graph is started again, a called playbook's by its
  caller's step), and no node of it has run. So the input checkpoint is held, replaced by
  the first step's when that is written (its child), and dropped when the second step's
  checkpoint is written. But a graph started again gets a checkpoint of another id, and
  the tasks of its next step, and so the namespaces of the graphs they call, derive from
  it: had a callee of that step written checkpoints, they would not be found and it
  would run again (its model calls too). So what is held of a graph is written before
  anything of a graph it encloses is.

What is held is written before any read of its namespace (so a read sees what LangGraph
wrote) and before any write of a graph it encloses, and dropped when the pulse's
checkpoints are removed. Other threads (a
subagent's) and every other method are the saver's own.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from sea.host.pulse_savers import delegate_the_rest


def _special(writes: Any) -> bool:
    """Writes no checkpoint follows at once: LangGraph's own channels (``__error__``,
    ``__interrupt__``, ``__resume__``...)."""
    return any(str(channel).startswith("__") for channel, _ in writes)


def _encloses(outer: str, namespace: str) -> bool:
    """Whether the graph of namespace ``outer`` encloses that of ``namespace``."""
    return outer != namespace and (outer == "" or namespace.startswith(outer + "|"))


def _first_step(held: Any, metadata: Any) -> bool:
    """Whether ``metadata`` is of the checkpoint after a graph's first step (its
    ``__start__``), the child of its input checkpoint (``held``'s metadata)."""
    return (held or {}).get("source") == "input" and (metadata or {}).get("source") == "loop" \
        and (metadata or {}).get("step") == 0


def _with_held(held: Any, checkpoint: Any, new_versions: Any) -> Any:
    """``new_versions`` with the channels a dropped parent checkpoint wrote (``held``, its
    new versions) that this ``checkpoint`` did not write again: a saver stores a channel's
    value with the checkpoint that gives it a new version (and a later one only names it),
    so the child of a checkpoint never written stores them itself, at their version."""
    versions = checkpoint["channel_versions"]
    merged = {k: versions[k] for k in held or () if k in versions}
    merged.update(new_versions or {})
    return merged


class DurablePulse(BaseCheckpointSaver[Any]):
    """A recoverable pulse's view of ``saver``: its steps' task writes and its graphs'
    input checkpoints are held until the checkpoint that makes them needless is written
    (then dropped), or until something reads or needs them (then written).

    Args:
        saver: The saver (or a view of it) the pulse's checkpoints go to.
        thread_id: The pulse's thread (its pulse id).
        hold_writes: Hold the steps' task writes (see the module).
        hold_inputs: Hold the graphs' input checkpoints (see the module).
    """

    def __init__(self, saver: BaseCheckpointSaver[Any], thread_id: str, *,
                 hold_writes: bool = True, hold_inputs: bool = True) -> None:
        # not BaseCheckpointSaver.__init__: the serializer is the saver's own
        self.serde = saver.serde
        self.saver = saver
        self._thread = thread_id
        self._hold_writes, self._hold_inputs = hold_writes, hold_inputs
        self._writes: dict[str, list[tuple[Any, ...]]] = {}
        """Per namespace: held task writes (config, writes, task id, task path)."""
        self._inputs: dict[str, tuple[Any, ...]] = {}
        """Per namespace: a held input checkpoint (config, checkpoint, metadata, versions)."""
        self.get_next_version = saver.get_next_version  # type: ignore[method-assign]

    @property
    def config_specs(self) -> list[Any]:
        """The saver's."""
        return list(self.saver.config_specs)

    def _namespace(self, config: Any) -> str | None:
        """The namespace of ``config`` if it is of the pulse's thread, else None."""
        configurable = (config or {}).get("configurable") or {}
        if configurable.get("thread_id") != self._thread:
            return None
        return str(configurable.get("checkpoint_ns", ""))

    async def _flush(self, namespace: str, *, enclosing: bool = True) -> None:
        """Write what is held of ``namespace``: its input checkpoint, then its writes; first,
        unless told not to, what is held of the graphs that enclose it (see
        :meth:`_flush_enclosing`)."""
        if enclosing:
            await self._flush_enclosing(namespace)
        held = self._inputs.pop(namespace, None)
        if held is not None:
            await self.saver.aput(*held)
        for config, writes, task_id, task_path in self._writes.pop(namespace, ()):
            await self.saver.aput_writes(config, writes, task_id, task_path)

    async def _flush_enclosing(self, namespace: str) -> None:
        """Write what is held of the graphs enclosing ``namespace``, outermost first, before
        anything of ``namespace`` is written. The tasks of a graph's step, and so the
        namespaces of the graphs they call, derive from the id of the checkpoint before the
        step: a graph started again after its held checkpoint was lost would look for its
        callees' checkpoints under other namespaces and run them again."""
        held = sorted((h for h in {*self._inputs, *self._writes} if _encloses(h, namespace)),
                      key=len)
        for other in held:
            await self._flush(other, enclosing=False)

    async def aget_tuple(self, config: Any) -> Any:
        """The saver's, after what is held of the namespace is written."""
        namespace = self._namespace(config)
        if namespace is not None:
            await self._flush(namespace)
        return await self.saver.aget_tuple(config)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Held if an input checkpoint; else the saver's, and what it makes needless of
        its namespace (the writes of the step before it, its graph's input) dropped."""
        namespace = self._namespace(config)
        if namespace is None:
            return await self.saver.aput(config, checkpoint, metadata, new_versions)
        if self._hold_inputs and (metadata or {}).get("source") == "input":
            await self._flush(namespace, enclosing=False)  # started again: what it had
            self._inputs[namespace] = (config, checkpoint, metadata, new_versions)
            return {"configurable": {"thread_id": self._thread, "checkpoint_ns": namespace,
                                     "checkpoint_id": checkpoint["id"]}}
        parent = (config.get("configurable") or {}).get("checkpoint_id")
        held = self._inputs.get(namespace)
        if held is None or not _first_step(held[2], metadata):  # a checkpoint written
            await self._flush_enclosing(namespace)
        if held is not None and held[1]["id"] != parent:  # not the child of what is held
            await self._flush(namespace)
            held = None
        self._inputs.pop(namespace, None)
        kept = [w for w in self._writes.pop(namespace, ())
                if (w[0].get("configurable") or {}).get("checkpoint_id") != parent]
        for w in kept:  # writes of another checkpoint than this one's parent: written
            await self.saver.aput_writes(*w)
        if held is not None:  # what its channels were given there is written with this one
            new_versions = _with_held(held[3], checkpoint, new_versions)
            if _first_step(held[2], metadata):  # the input, mapped: held in its place
                self._inputs[namespace] = (config, checkpoint, metadata, new_versions)
                return {"configurable": {"thread_id": self._thread,
                                         "checkpoint_ns": namespace,
                                         "checkpoint_id": checkpoint["id"]}}
        return await self.saver.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        """Held (a task's writes, which the next checkpoint holds); the saver's, after what
        is held of the namespace, for writes no checkpoint follows at once."""
        namespace = self._namespace(config)
        if namespace is not None:
            if self._hold_writes and not _special(writes):
                self._writes.setdefault(namespace, []).append(
                    (config, list(writes), task_id, task_path))
                return
            await self._flush(namespace)
        await self.saver.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """The saver's; what is held of the thread is dropped."""
        if thread_id == self._thread:
            self._writes.clear()
            self._inputs.clear()
        await self.saver.adelete_thread(thread_id)

    async def flush(self) -> None:
        """Write everything held."""
        for namespace in {*self._inputs, *self._writes}:
            await self._flush(namespace)


delegate_the_rest(DurablePulse)
