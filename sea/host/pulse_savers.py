"""Views of the runtime's checkpoint saver for one pulse, which spare the store what a
pulse that has just started does not need from it.

* :class:`FreshPulse` answers a new pulse's reads of checkpoints it has not written
  ("none") without asking the store; every write goes to the store.
* :class:`HeldPulse` also keeps the pulse's writes in memory until the pulse ends: a pulse
  that ends without waiting for an answer never writes a checkpoint (and so has none to
  remove), and one that waits writes what it held, in the order it was written.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver


class FreshPulse(BaseCheckpointSaver[Any]):
    """A pulse's view of the runtime's saver while the pulse runs for the first time.

    When a pulse starts, LangGraph asks the saver for the latest checkpoint of the pulse's
    graph, and again for each called playbook's graph (each in a namespace of its own),
    where such a pulse has none: a round trip to the store each (a worker thread's hop for
    SQLite, a network round trip for PostgreSQL), two or three for a bundled persona's pulse.
    This view answers those reads itself, "no checkpoint", for every namespace of the pulse's
    thread that it has not written (a checkpoint or pending writes) through this view; any
    other read, and every write, goes to ``saver``. Made only for a pulse that has no
    checkpoint: a new one, or one a crashed worker never checkpointed.

    Args:
        saver: The runtime's saver.
        thread_id: The pulse's thread (its pulse id).
    """

    def __init__(self, saver: BaseCheckpointSaver[Any], thread_id: str) -> None:
        # not BaseCheckpointSaver.__init__: the serializer is the saver's own
        self.serde = saver.serde
        self.saver = saver
        self._thread = thread_id
        self._written: set[str] = set()
        # asked at every step: the saver's own method, without a delegating call around it
        self.get_next_version = saver.get_next_version  # type: ignore[method-assign]

    @property
    def config_specs(self) -> list[Any]:
        """The saver's."""
        return list(self.saver.config_specs)

    def _where(self, config: Any) -> tuple[Any, str]:
        configurable = (config or {}).get("configurable") or {}
        return configurable.get("thread_id"), str(configurable.get("checkpoint_ns", ""))

    async def aget_tuple(self, config: Any) -> Any:
        """None for a namespace of this pulse not yet written; else the saver's answer."""
        thread, namespace = self._where(config)
        if thread == self._thread and namespace not in self._written:
            return None
        return await self.saver.aget_tuple(config)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """The saver's (the namespace is read from the saver from now on)."""
        self._note(config)
        return await self.saver.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        """The saver's (the namespace is read from the saver from now on)."""
        self._note(config)
        await self.saver.aput_writes(config, writes, task_id, task_path)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """The saver's (the namespace is read from the saver from now on)."""
        self._note(config)
        return self.saver.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """The saver's (the namespace is read from the saver from now on)."""
        self._note(config)
        self.saver.put_writes(config, writes, task_id, task_path)

    def _note(self, config: Any) -> None:
        thread, namespace = self._where(config)
        if thread == self._thread:
            self._written.add(namespace)


def _delegate(name: str) -> Any:
    def delegated(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.saver, name)(*args, **kwargs)

    delegated.__name__ = delegated.__qualname__ = name
    delegated.__doc__ = f"The saver's ``{name}``."
    return delegated


def delegate_the_rest(view: type) -> None:
    """Give ``view`` (a saver wrapping ``self.saver``) every other public method of a saver,
    present or to come, as the wrapped saver's own."""
    for name, member in vars(BaseCheckpointSaver).items():
        if not name.startswith("_") and callable(member) and name not in vars(view):
            setattr(view, name, _delegate(name))


delegate_the_rest(FreshPulse)


class HeldPulse(FreshPulse):
    """A new pulse's view of the runtime's saver that holds the pulse's checkpoints in
    memory until :meth:`flush`.

    A pulse that no other process takes over writes its checkpoints when its graphs end
    (LangGraph's ``exit`` durability) and they serve only an approval wait: when the pulse
    ends without waiting, the runtime removes them again. Held here, such a pulse costs the
    store nothing: no write for each graph it ran, no removal at its end. A pulse that
    waits has its checkpoints written by :meth:`flush`, in the order LangGraph wrote them,
    as a copy taken when each was written (later changes to a value do not reach it).
    Reads of the pulse's namespaces come from what is held; other threads (a subagent's)
    and every other method are the saver's own.

    Args:
        saver: The runtime's saver.
        thread_id: The pulse's thread (its pulse id).
    """

    def __init__(self, saver: BaseCheckpointSaver[Any], thread_id: str) -> None:
        super().__init__(saver, thread_id)
        self._held = InMemorySaver(serde=saver.serde)
        self._order: list[tuple[Any, ...]] = []
        self._holding = True

    def _mine(self, config: Any) -> bool:
        return self._holding and self._where(config)[0] == self._thread

    def get_tuple(self, config: Any) -> Any:
        """What is held for the pulse's thread (None for a namespace not written); another
        thread's from the saver."""
        if self._mine(config):
            return self._held.get_tuple(config)
        return self.saver.get_tuple(config)

    async def aget_tuple(self, config: Any) -> Any:
        """What is held for the pulse's thread (None for a namespace not written); another
        thread's from the saver."""
        if self._mine(config):
            return self._held.get_tuple(config)
        return await self.saver.aget_tuple(config)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Held for the pulse's thread; another thread's goes to the saver."""
        if not self._mine(config):
            return await self.saver.aput(config, checkpoint, metadata, new_versions)
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Any, task_id: str, task_path: str = ""
    ) -> None:
        """Held for the pulse's thread; another thread's go to the saver."""
        if not self._mine(config):
            await self.saver.aput_writes(config, writes, task_id, task_path)
            return
        self.put_writes(config, writes, task_id, task_path)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Held for the pulse's thread (serialized now: a copy); another thread's goes to
        the saver."""
        if not self._mine(config):
            return self.saver.put(config, checkpoint, metadata, new_versions)
        stored = self._held.put(config, checkpoint, metadata, new_versions)
        self._order.append(("put", config, stored, dict(metadata), dict(new_versions)))
        return stored

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """Held for the pulse's thread (as copies); another thread's go to the saver."""
        if not self._mine(config):
            self.saver.put_writes(config, writes, task_id, task_path)
            return
        dumps, loads = self.serde.dumps_typed, self.serde.loads_typed
        copies = [(channel, loads(dumps(value))) for channel, value in writes]
        self._held.put_writes(config, copies, task_id, task_path)
        self._order.append(("writes", config, copies, task_id, task_path))

    async def flush(self) -> None:
        """Write what is held to the saver, in the order it was written, and hold nothing
        more: from then on this view is the saver's (reads of the pulse's namespaces
        included)."""
        order, self._order, self._holding = self._order, [], False
        for op in order:
            if op[0] == "put":
                _, config, stored, metadata, new_versions = op
                held = self._held.get_tuple(stored)
                assert held is not None  # put above
                await self.saver.aput(config, held.checkpoint, metadata, new_versions)
            else:
                _, config, writes, task_id, task_path = op
                await self.saver.aput_writes(config, writes, task_id, task_path)
